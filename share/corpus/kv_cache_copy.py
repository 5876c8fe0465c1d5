# SPDX-License-Identifier: MIT
"""Paged KV-cache write: store the keys and values of newly processed tokens
into block-structured caches at the slots given by ``slot_mapping``, as done
before paged attention in LLM serving. ``key`` and ``value`` have shape
(tokens, heads, head_dim); ``key_cache`` and ``value_cache`` have shape
(num_blocks, block_size, heads, head_dim) (block and slot strides may be
arbitrary, e.g. views into one combined buffer); ``slot_mapping`` is int64 of
shape (tokens,) with ``slot = block * block_size + offset`` and -1 marking
padding tokens that must not be written. The caches are updated in place and
returned. Performance idea: one program per (token, chunk of heads * head_dim)
copies a contiguous run of elements for both K and V in the same program, so
the slot index is loaded once and split into block/offset once; padding
tokens exit before touching memory.
"""

import torch
import triton
import triton.language as tl

ENTRY = "write_kv_cache"


@triton.jit
def _kv_cache_write_kernel(key_ptr, value_ptr, k_cache_ptr, v_cache_ptr, slot_ptr,
                           row_size, block_size,
                           stride_kt, stride_vt, stride_kc_block, stride_kc_slot,
                           stride_vc_block, stride_vc_slot, BLOCK: tl.constexpr):
    """Copy one chunk of token t's K and V rows into its cache slot."""
    token = tl.program_id(axis=0).to(tl.int64)
    pid_c = tl.program_id(axis=1)
    slot = tl.load(slot_ptr + token)
    if slot < 0:
        return  # padding token: nothing to write
    block = slot // block_size
    offset = slot % block_size

    # heads * head_dim elements are contiguous in both source and cache, so
    # a token's row is one flat, coalesced run.
    cols = pid_c * BLOCK + tl.arange(0, BLOCK)
    mask = cols < row_size
    k = tl.load(key_ptr + token * stride_kt + cols, mask=mask)
    v = tl.load(value_ptr + token * stride_vt + cols, mask=mask)
    tl.store(k_cache_ptr + block * stride_kc_block + offset * stride_kc_slot + cols, k, mask=mask)
    tl.store(v_cache_ptr + block * stride_vc_block + offset * stride_vc_slot + cols, v, mask=mask)


def _check_row_contiguous(t, name):
    heads, head_dim = t.shape[-2], t.shape[-1]
    if t.stride(-1) != 1 or (heads > 1 and t.stride(-2) != head_dim):
        raise ValueError("write_kv_cache: %s must have contiguous (heads, head_dim)" % name)


def write_kv_cache(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
                   value_cache: torch.Tensor, slot_mapping: torch.Tensor):
    """Scatter key/value rows into the paged caches in place; returns the caches."""
    if key.dim() != 3 or key.shape != value.shape:
        raise ValueError("write_kv_cache: key and value must be (tokens, heads, head_dim)")
    if key_cache.dim() != 4 or key_cache.shape != value_cache.shape:
        raise ValueError("write_kv_cache: caches must be (blocks, block_size, heads, head_dim)")
    if key_cache.shape[2:] != key.shape[1:] or key_cache.dtype != key.dtype:
        raise ValueError("write_kv_cache: cache and key disagree on heads/head_dim/dtype")
    for t, name in ((key, "key"), (value, "value"), (key_cache, "key_cache"),
                    (value_cache, "value_cache")):
        _check_row_contiguous(t, name)
    T, H, D = key.shape
    if T == 0:
        return key_cache, value_cache
    slot_mapping = slot_mapping.contiguous()
    row_size = H * D
    BLOCK = min(1024, triton.next_power_of_2(row_size))
    grid = (T, triton.cdiv(row_size, BLOCK))
    _kv_cache_write_kernel[grid](key, value, key_cache, value_cache, slot_mapping,
                                 row_size, key_cache.shape[1],
                                 key.stride(0), value.stride(0),
                                 key_cache.stride(0), key_cache.stride(1),
                                 value_cache.stride(0), value_cache.stride(1),
                                 BLOCK=BLOCK, num_warps=4)
    return key_cache, value_cache


def _reference(key, value, key_cache, value_cache, slot_mapping):
    kc, vc = key_cache.clone(), value_cache.clone()
    block_size = kc.shape[1]
    for t, slot in enumerate(slot_mapping.tolist()):
        if slot >= 0:
            kc[slot // block_size, slot % block_size] = key[t]
            vc[slot // block_size, slot % block_size] = value[t]
    return kc, vc


def _example_inputs(device):
    g = torch.Generator().manual_seed(33)
    T, H, D, num_blocks, block_size = 7, 3, 40, 4, 8
    dt = torch.float16
    key = torch.randn(T, H, D, generator=g).to(device=device, dtype=dt)
    value = torch.randn(T, H, D, generator=g).to(device=device, dtype=dt)
    # K and V caches as views into one (blocks, 2, block_size, H, D) buffer,
    # so the block stride is twice the size of one cache block.
    kv = torch.randn(num_blocks, 2, block_size, H, D, generator=g).to(device=device, dtype=dt)
    slots = torch.randperm(num_blocks * block_size, generator=g)[:T]
    slots[3] = -1  # a padding token
    return (key, value, kv[:, 0], kv[:, 1], slots.to(device))


TOLERANCE = dict(atol=0.0, rtol=0.0)
