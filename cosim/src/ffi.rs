//! The C ABI of `csrc/shim.cpp`: the functions of a loaded model library.
//!
//! One step passes the inputs and the outputs as `uint64_t` arrays in the
//! order of [`sbrp_iface::ports::PORTS`]; the shim's per-port copy code is
//! generated from the same table into `sbrp_ports.h` at build time
//! (`top_ports::ports_header`), so there is no hand-written struct to keep in
//! sync. At load, the library's port count and names are checked against the
//! table, which catches a library built from another table.

use std::ffi::{c_char, c_void, CStr};

use libloading::Library;
use sbrp_iface::ports::{N_IN, N_OUT, PORTS};

use crate::CosimError;

/// Must equal `SHIM_ABI` in csrc/shim.cpp.
pub(crate) const SHIM_ABI: u32 = 3;

/// Opaque model handle (`SbrpPb*` in the shim).
pub(crate) type Handle = *mut c_void;

/// The shim's entry points, resolved once per library. The library is never
/// unloaded (see `load`), so the pointers stay valid for the process.
#[derive(Clone, Copy)]
pub(crate) struct ShimFns {
    pub create: unsafe extern "C" fn() -> Handle,
    pub destroy: unsafe extern "C" fn(Handle),
    /// `in`: [`N_IN`] values, `out`: [`N_OUT`] values, in table order.
    pub step: unsafe extern "C" fn(Handle, *const u64, *mut u64),
    pub time: unsafe extern "C" fn(Handle) -> u64,
    /// (handle, path, error buffer, its size): 0 started, 1 not a traced
    /// build, 2 cannot open.
    pub trace_open: unsafe extern "C" fn(Handle, *const c_char, *mut c_char, usize) -> u32,
    /// (handle, error buffer, its size): 0 complete, 1 a write failed.
    pub trace_close: unsafe extern "C" fn(Handle, *mut c_char, usize) -> u32,
}

/// The port names as the shim declares them (space-separated, table order).
pub(crate) fn table_names() -> String {
    PORTS.iter().map(|p| p.name).collect::<Vec<_>>().join(" ")
}

/// Resolves the shim's functions in `lib` and checks its ABI version, port
/// count and port names.
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
    let (mut n_in, mut n_out) = (0u32, 0u32);
    let version = abi(&mut n_in, &mut n_out);
    if version != SHIM_ABI || n_in as usize != N_IN || n_out as usize != N_OUT {
        return Err(CosimError::Load(format!(
            "shim ABI mismatch: library has version {version} ({n_in} inputs, {n_out} outputs), \
             this crate expects {SHIM_ABI} ({N_IN} inputs, {N_OUT} outputs)"
        )));
    }
    let names: unsafe extern "C" fn() -> *const c_char = sym(lib, b"sbrp_pb_port_names\0")?;
    let p = names();
    let found = if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    if found != table_names() {
        return Err(CosimError::Load(format!(
            "shim ports differ from the port table: library has `{found}`, table has `{}`",
            table_names()
        )));
    }
    Ok(ShimFns {
        create: sym(lib, b"sbrp_pb_create\0")?,
        destroy: sym(lib, b"sbrp_pb_destroy\0")?,
        step: sym(lib, b"sbrp_pb_step\0")?,
        time: sym(lib, b"sbrp_pb_time\0")?,
        trace_open: sym(lib, b"sbrp_pb_trace_open\0")?,
        trace_close: sym(lib, b"sbrp_pb_trace_close\0")?,
    })
}
