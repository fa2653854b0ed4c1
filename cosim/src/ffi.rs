//! The C ABI of `csrc/shim.cpp`: the structs passed once per cycle and the
//! functions of a loaded model library.

use std::ffi::{c_char, c_int, c_void};

use libloading::Library;

use crate::CosimError;

/// Must equal `SHIM_ABI` in csrc/shim.cpp.
pub(crate) const SHIM_ABI: u32 = 1;

/// One cycle's inputs (mirror of `PbInC` in the shim), already masked to the
/// port widths.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PbInC {
    pub req_line: u32,
    pub rst: u8,
    pub req_valid: u8,
    pub req_op: u8,
    pub req_warp: u8,
    pub ack: u8,
    pub drain_all: u8,
    pub _pad: [u8; 2],
}

/// One cycle's outputs (mirror of `PbOutC` in the shim).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PbOutC {
    pub flush_warps: u64,
    pub stall: u64,
    pub obs_odm: u64,
    pub obs_edm: u64,
    pub obs_fsm: u64,
    pub flush_line: u32,
    pub obs_actr: u32,
    pub obs_head: u32,
    pub obs_tail: u32,
    pub req_ready: u8,
    pub req_wait: u8,
    pub flush_valid: u8,
    pub flush_evict: u8,
    pub inv_pm: u8,
    pub idle: u8,
    pub obs_full: u8,
    pub obs_drain: u8,
}

/// Opaque model handle (`SbrpPb*` in the shim).
pub(crate) type Handle = *mut c_void;

/// The shim's entry points, resolved once per library. The library is never
/// unloaded (see `load`), so the pointers stay valid for the process.
#[derive(Clone, Copy)]
pub(crate) struct ShimFns {
    pub create: unsafe extern "C" fn() -> Handle,
    pub destroy: unsafe extern "C" fn(Handle),
    pub step: unsafe extern "C" fn(Handle, *const PbInC, *mut PbOutC),
    pub trace_open: unsafe extern "C" fn(Handle, *const c_char) -> c_int,
    pub trace_close: unsafe extern "C" fn(Handle),
    pub time: unsafe extern "C" fn(Handle) -> u64,
}

/// Resolves the shim's functions in `lib` and checks its ABI version and
/// struct sizes.
///
/// # Safety
/// `lib` must be a library built by this crate from csrc/shim.cpp (the ABI
/// check then guards against a shim of another version), and it must stay
/// loaded for as long as the returned pointers are used.
pub(crate) unsafe fn resolve(lib: &Library) -> Result<ShimFns, CosimError> {
    unsafe fn sym<T: Copy>(lib: &Library, name: &[u8]) -> Result<T, CosimError> {
        let s = lib.get::<T>(name).map_err(|e| {
            CosimError::Load(format!(
                "symbol {} missing: {e}",
                String::from_utf8_lossy(&name[..name.len() - 1])
            ))
        })?;
        Ok(*s)
    }
    let abi: unsafe extern "C" fn(*mut u32, *mut u32) -> u32 = sym(lib, b"sbrp_pb_abi\0")?;
    let (mut in_size, mut out_size) = (0u32, 0u32);
    let version = abi(&mut in_size, &mut out_size);
    if version != SHIM_ABI
        || in_size as usize != std::mem::size_of::<PbInC>()
        || out_size as usize != std::mem::size_of::<PbOutC>()
    {
        return Err(CosimError::Load(format!(
            "shim ABI mismatch: library has version {version} (in {in_size} B, out {out_size} B), \
             this crate expects {SHIM_ABI} (in {} B, out {} B)",
            std::mem::size_of::<PbInC>(),
            std::mem::size_of::<PbOutC>()
        )));
    }
    Ok(ShimFns {
        create: sym(lib, b"sbrp_pb_create\0")?,
        destroy: sym(lib, b"sbrp_pb_destroy\0")?,
        step: sym(lib, b"sbrp_pb_step\0")?,
        trace_open: sym(lib, b"sbrp_pb_trace_open\0")?,
        trace_close: sym(lib, b"sbrp_pb_trace_close\0")?,
        time: sym(lib, b"sbrp_pb_time\0")?,
    })
}
