namespace hopgemm { extern const char* const kLibraryName; const char* const kLibraryName = "hopgemm"; }
