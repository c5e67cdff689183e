"""The module-level requirement of the torch-based GPU tests, skipping with a reason that says what is missing."""
import pytest


def require_torch_on_sm90(purpose):
    """torch, where it is installed and sees an SM90 GPU; otherwise skips the calling test module, saying which of
    the two is missing. `purpose` says what the module needs torch for."""
    torch = pytest.importorskip("torch", reason=f"needs torch (pip install torch) for {purpose}")
    if not torch.cuda.is_available():
        pytest.skip("needs an SM90 (Hopper) GPU: torch sees no CUDA device (no GPU here, or no NVIDIA driver)",
                    allow_module_level=True)
    major, minor = torch.cuda.get_device_capability()
    if major != 9:
        pytest.skip(f"needs an SM90 (Hopper) GPU, found {torch.cuda.get_device_name()} (sm_{major}{minor})",
                    allow_module_level=True)
    return torch
