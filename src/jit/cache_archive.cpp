// Kernel-cache archives (include/hopgemm/jit.hpp): a minimal POSIX ustar writer and reader, regular files only.

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBlock = 512;
constexpr const char* kPrefix = "kernels/";  // every member is kernels/<entry>/<file>, as in the cache directory
constexpr const char* kEntryFiles[] = {"manifest", "kernel.cu", "kernel.cubin", "compile.log"};

[[noreturn]] void fail(const std::string& what) { throw Error(ErrorKind::kJit, what); }

// The octal number field of a header (NUL- or space-terminated).
void put_octal(char* field, size_t width, unsigned long long value) {
  std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1), value);
}

std::array<char, kBlock> header(const std::string& name, size_t size) {
  std::array<char, kBlock> h{};
  std::memcpy(h.data(), name.data(), name.size());    // name[100]
  put_octal(h.data() + 100, 8, 0644);                 // mode
  put_octal(h.data() + 108, 8, 0);                    // uid
  put_octal(h.data() + 116, 8, 0);                    // gid
  put_octal(h.data() + 124, 12, size);                // size
  put_octal(h.data() + 136, 12, 0);                   // mtime: archives of the same entries are byte-identical
  std::memset(h.data() + 148, ' ', 8);                // checksum, counted as spaces
  h[156] = '0';                                       // regular file
  std::memcpy(h.data() + 257, "ustar", 6);            // magic, with its NUL
  std::memcpy(h.data() + 263, "00", 2);               // version
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);      // six digits, NUL, and the space already there
  h[155] = ' ';
  return h;
}

unsigned long long read_octal(const char* field, size_t width) {
  unsigned long long value = 0;
  for (size_t i = 0; i < width && field[i] != '\0' && field[i] != ' '; ++i) {
    if (field[i] < '0' || field[i] > '7') return ~0ull;
    value = value * 8 + static_cast<unsigned>(field[i] - '0');
  }
  return value;
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool is_entry_file(const std::string& file) {
  for (const char* name : kEntryFiles) {
    if (file == name) return true;
  }
  return false;
}

}  // namespace

CacheArchiveReport export_cache_archive(const std::string& path, const std::vector<std::string>& entry_dirs) {
  CacheArchiveReport report;
  const std::set<std::string> wanted(entry_dirs.begin(), entry_dirs.end());
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail("cache export: cannot write " + temporary);
    const std::array<char, kBlock> zeros{};
    for (const auto& entry : jit::list_cache_entries()) {
      if (!entry.valid || (!wanted.empty() && !wanted.count(entry.dir))) continue;
      const std::string name = fs::path(entry.dir).filename().string();
      for (const char* file : kEntryFiles) {
        const std::string member = kPrefix + name + "/" + file;
        if (member.size() >= 100) fail("cache export: entry name too long for an archive: " + name);
        std::error_code ec;
        if (!fs::exists(entry.dir + "/" + file, ec)) continue;  // compile.log is optional
        const std::string data = read_whole(entry.dir + "/" + file);
        const auto h = header(member, data.size());
        out.write(h.data(), kBlock);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        out.write(zeros.data(), static_cast<std::streamsize>((kBlock - data.size() % kBlock) % kBlock));
      }
      ++report.entries;
    }
    out.write(zeros.data(), kBlock);  // two zero blocks end the archive
    out.write(zeros.data(), kBlock);
    if (!out.flush()) fail("cache export: cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    fail("cache export: cannot rename " + temporary + " to " + path);
  }
  return report;
}

CacheArchiveReport import_cache_archive(const std::string& path) {
  const std::string data = read_whole(path);
  // entry name -> file -> contents
  std::map<std::string, std::map<std::string, std::string>> entries;
  std::set<std::string> ignored;
  size_t at = 0;
  for (;;) {
    if (at + kBlock > data.size()) fail("cache import: " + path + " is not a tar archive (it ends inside a header)");
    const char* h = data.data() + at;
    if (std::all_of(h, h + kBlock, [](char c) { return c == 0; })) break;
    if (std::memcmp(h + 257, "ustar", 5) != 0) fail("cache import: " + path + " is not a ustar archive");
    const std::string name(h, strnlen(h, 100));
    const unsigned long long size = read_octal(h + 124, 12);
    if (size == ~0ull || at + kBlock + size > data.size()) fail("cache import: " + path + " is truncated at " + name);
    const char type = h[156];
    const std::string body = data.substr(at + kBlock, size);
    at += kBlock + (size + kBlock - 1) / kBlock * kBlock;
    // kernels/<entry>/<file>: nothing else is read (no links, no paths outside an entry).
    const size_t slash = name.find('/', std::strlen(kPrefix));
    if ((type != '0' && type != '\0') || name.rfind(kPrefix, 0) != 0 || slash == std::string::npos) {
      if (type != '5') ignored.insert(name);  // directories are fine to skip silently
      continue;
    }
    const std::string entry = name.substr(std::strlen(kPrefix), slash - std::strlen(kPrefix));
    const std::string file = name.substr(slash + 1);
    if (entry.empty() || entry.find("..") != std::string::npos || !is_entry_file(file)) {
      ignored.insert(name);
      continue;
    }
    entries[entry][file] = body;
  }

  CacheArchiveReport report;
  for (const auto& name : ignored) report.skipped.push_back(name + ": not a cache entry file");
  const std::string root = get_cache_dir();
  std::error_code ec;
  fs::create_directories(root + "/tmp", ec);
  if (ec) fail("cache import: cannot create " + root + "/tmp: " + ec.message());
  for (const auto& [entry, files] : entries) {
    jit::TempDir staging(root + "/tmp", "import-");
    if (!staging.ok()) fail("cache import: " + staging.error());
    const std::string dir = staging.path() + "/" + entry;
    fs::create_directory(dir, ec);
    for (const auto& [file, body] : files) {
      std::ofstream out(dir + "/" + file, std::ios::binary);
      out.write(body.data(), static_cast<std::streamsize>(body.size()));
      if (!out.flush()) fail("cache import: cannot write " + dir + "/" + file);
    }
    const std::string result = jit::adopt_entry(dir);
    if (result.empty()) {
      ++report.entries;
    } else if (result == "present") {
      ++report.already_present;
    } else {
      report.skipped.push_back(entry + ": " + result);
    }
  }
  return report;
}

}  // namespace hopgemm
