"""DeepGEMM's remaining SM90 ops (issue 31, item 2) refuse bad arguments with an error naming the argument, before
anything asks the device: stand-in torch tensors on "cuda" (fake_torch.py), in a fresh process, on a machine without a
GPU. The GPU tests (tests/gpu/test_skip_head_mid.py, ...) check what the ops compute."""
from test_argument_errors import run_with_fake_torch


def test_skip_head_mid_argument_errors():
    run_with_fake_torch("""
        T = torch.Tensor
        def operands(m, n, k):
            a = (T((m, k), dtype=torch.float8_e4m3fn, ptr=0x100000), T((m, (k + 127) // 128), dtype=torch.float32, ptr=0x200000))
            b = (T((n, k), dtype=torch.float8_e4m3fn, ptr=0x300000),
                 T(((n + 127) // 128, (k + 127) // 128), dtype=torch.float32, ptr=0x400000))
            return a, b
        a, b = operands(256, 512, 512)
        d = T((256, 640), dtype=torch.bfloat16, ptr=0x500000)
        op = hopgemm.fp8_gemm_nt_skip_head_mid
        cases = [
            ((128, 64, 96), d, "argument 'head_splits' must be multiples of 64 columns"),
            ((128, 0, 128), d, "argument 'head_splits' must be \\\\(left, mid, right\\\\) with mid > 0"),
            ((0, 64, 0), d, "mid > 0 and left \\\\+ right > 0"),
            ((192, 64, 64), T((256, 704), dtype=torch.bfloat16, ptr=0x500000), "argument 'd' must have shape"),
            ((128, 64, 128), T((256, 512), dtype=torch.bfloat16, ptr=0x500000), "argument 'd' must have shape"),
        ]
        for splits, out, match in cases:
            with pytest.raises(ValueError, match=match):
                op(a, b, out, splits)
        with pytest.raises(ValueError, match="argument 'b' must have N a multiple of left \\\\+ right = 256"):
            a3, b3 = operands(256, 384, 512)
            op(a3, b3, T((256, 480), dtype=torch.bfloat16, ptr=0x500000), (128, 64, 128))
        with pytest.raises(ValueError, match="argument 'head_splits' must be multiples of 32 columns"):
            op(a, b, T((256, 640), dtype=torch.float32, ptr=0x500000), (128, 48, 128))
        with pytest.raises(ValueError, match="argument 'recipe' must be \\\\(1, 128, 128\\\\)"):
            op(a, b, T((256, 640), dtype=torch.float32, ptr=0x500000), (128, 64, 128), recipe=(1, 1, 128))
        with pytest.raises(ValueError, match="argument 'a' must have K > 0"):
            a0, b0 = operands(256, 512, 0)
            op(a0, b0, d, (128, 64, 128))
        with pytest.raises(TypeError):
            op(a, b, d, (128, 64))
    """)


def test_einsum_argument_errors():
    run_with_fake_torch("""
        T = torch.Tensor
        bf16 = torch.bfloat16
        x = T((32, 8, 512), dtype=bf16, ptr=0x100000)
        y = T((8, 1024, 512), dtype=bf16, ptr=0x200000)
        z = T((32, 8, 1024), dtype=bf16, ptr=0x300000)
        with pytest.raises(NotImplementedError, match="einsum: expression 'bhr,hrd->bhd' is not one of DeepGEMM's SM90"):
            hopgemm.einsum("bhr,hrd->bhd", x, y, z)
        with pytest.raises(ValueError, match="argument 'd' must have shape"):
            hopgemm.einsum("bhr,hdr->bhd", x, y, T((32, 8, 512), dtype=bf16, ptr=0x300000))
        with pytest.raises(ValueError, match="argument 'b' must have shape"):
            hopgemm.einsum("bhd,hdr->bhr", T((32, 8, 1024), dtype=bf16, ptr=0x100000),
                           T((8, 512, 1024), dtype=bf16, ptr=0x200000), z)
        with pytest.raises(ValueError, match="argument 'c' is taken only by 'bmk,bnk->mn'"):
            hopgemm.einsum("bhr,hdr->bhd", x, y, z, z)
        with pytest.raises(ValueError, match="argument 'a' must be bfloat16"):
            hopgemm.einsum("bhr,hdr->bhd", T((32, 8, 512), dtype=torch.float32, ptr=0x100000), y, z)
        with pytest.raises(ValueError, match="argument 'd' must be bfloat16"):
            hopgemm.einsum("bhr,hdr->bhd", x, y, T((32, 8, 1024), dtype=torch.float32, ptr=0x300000))
        strided = T((32, 8, 512), dtype=bf16, strides=(4096, 1, 8), ptr=0x100000)
        with pytest.raises(ValueError, match="argument 'a' must be row-major"):
            hopgemm.einsum("bhr,hdr->bhd", strided, y, z)
        with pytest.raises(ValueError, match="argument 'a' must have K a multiple of 8"):
            hopgemm.einsum("bhr,hdr->bhd", T((32, 8, 500), dtype=bf16, ptr=0x100000),
                           T((8, 1024, 500), dtype=bf16, ptr=0x200000), z)
        # bmk,bnk->mn: d [m, n], c of d's dtype and shape.
        a = T((129, 128, 128), dtype=bf16, ptr=0x100000)
        b = T((129, 384, 128), dtype=bf16, ptr=0x200000)
        d = T((128, 384), dtype=torch.float32, ptr=0x300000)
        with pytest.raises(ValueError, match="argument 'b' must have shape"):
            hopgemm.einsum("bmk,bnk->mn", a, T((128, 384, 128), dtype=bf16, ptr=0x200000), d, d)
        with pytest.raises(ValueError, match="argument 'c' must be float32"):
            hopgemm.einsum("bmk,bnk->mn", a, b, d, T((128, 384), dtype=bf16, ptr=0x400000))
        with pytest.raises(ValueError, match="argument 'd' must have 2 dimensions"):
            hopgemm.einsum("bmk,bnk->mn", a, b, T((1, 128, 384), dtype=torch.float32, ptr=0x300000))
    """)


def test_fp8_einsum_argument_errors():
    run_with_fake_torch("""
        T = torch.Tensor
        e4m3, f32 = torch.float8_e4m3fn, torch.float32
        x = (T((32, 8, 512), dtype=e4m3, ptr=0x100000), T((32, 8, 4), dtype=f32, ptr=0x200000))
        y = (T((8, 1024, 512), dtype=e4m3, ptr=0x300000), T((8, 8, 4), dtype=f32, ptr=0x400000))
        z = T((32, 8, 1024), dtype=torch.bfloat16, ptr=0x500000)
        op = hopgemm.fp8_einsum
        with pytest.raises(NotImplementedError, match="'bhd,hdr->bhr' is one of DeepGEMM's SM100 forms"):
            op("bhd,hdr->bhr", x, y, z)
        with pytest.raises(NotImplementedError, match="'bmk,bnk->mn' is not DeepGEMM's SM90 form"):
            op("bmk,bnk->mn", x, y, z)
        with pytest.raises(NotImplementedError, match="recipe \\\\(1, 1, 128\\\\) is not supported by fp8_einsum"):
            op("bhr,hdr->bhd", x, y, z, recipe=(1, 1, 128))
        with pytest.raises(ValueError, match="argument 'c' is not taken by fp8_einsum"):
            op("bhr,hdr->bhd", x, y, z, z)
        with pytest.raises(ValueError, match="argument 'sfa' must have shape \\\\[32, 8, 4\\\\]"):
            op("bhr,hdr->bhd", (x[0], T((32, 8, 3), dtype=f32, ptr=0x200000)), y, z)
        with pytest.raises(ValueError, match="argument 'sfb' must have shape \\\\[8, 8, 4\\\\]"):
            op("bhr,hdr->bhd", x, (y[0], T((8, 4, 4), dtype=f32, ptr=0x400000)), z)
        with pytest.raises(ValueError, match="argument 'sfa' must be row-major"):
            op("bhr,hdr->bhd", (x[0], T((32, 8, 4), strides=(32, 1, 8), dtype=f32, ptr=0x200000)), y, z)
        with pytest.raises(ValueError, match="argument 'a' must be float8_e4m3fn"):
            op("bhr,hdr->bhd", (T((32, 8, 512), dtype=torch.bfloat16, ptr=0x100000), x[1]), y, z)
        with pytest.raises(ValueError, match="argument 'd' must have shape"):
            op("bhr,hdr->bhd", x, y, T((32, 8, 512), dtype=torch.bfloat16, ptr=0x500000))
    """)


def test_tf32_hc_prenorm_gemm_argument_errors():
    run_with_fake_torch("""
        T = torch.Tensor
        bf16, f32 = torch.bfloat16, torch.float32
        a = T((137, 7168), dtype=bf16, ptr=0x100000)
        b = T((24, 7168), dtype=f32, ptr=0x200000)
        op = hopgemm.tf32_hc_prenorm_gemm
        d, s = T((137, 24), dtype=f32, ptr=0x300000), T((137,), dtype=f32, ptr=0x400000)
        d16, s16 = T((16, 137, 24), dtype=f32, ptr=0x300000), T((16, 137), dtype=f32, ptr=0x500000)
        with pytest.raises(ValueError, match="argument 'd' must have 3 dimensions"):
            op(a, b, d, s, num_splits=16)
        with pytest.raises(ValueError, match="argument 'd' must have 2 dimensions"):
            op(a, b, d16, s16)
        with pytest.raises(ValueError, match="argument 'sqr_sum' must have shape \\\\[16, 137\\\\]"):
            op(a, b, d16, T((8, 137), dtype=f32, ptr=0x500000), num_splits=16)
        with pytest.raises(ValueError, match="argument 'b' must be float32"):
            op(a, T((24, 7168), dtype=bf16, ptr=0x200000), d, s)
        with pytest.raises(ValueError, match="argument 'a' must be bfloat16"):
            op(T((137, 7168), dtype=f32, ptr=0x100000), b, d, s)
        with pytest.raises(NotImplementedError, match="N must be a multiple of 8 up to 32"):
            op(a, T((40, 7168), dtype=f32, ptr=0x200000), T((137, 40), dtype=f32, ptr=0x300000), s)
        with pytest.raises(ValueError, match="argument 'num_splits' must be None or >= 1"):
            op(a, b, T((0, 137, 24), dtype=f32, ptr=0x300000), T((0, 137), dtype=f32, ptr=0x500000), num_splits=0)
        with pytest.raises(ValueError, match="argument 'sqr_sum' must be contiguous"):
            op(a, b, d, T((137,), strides=(2,), dtype=f32, ptr=0x400000))
    """)
