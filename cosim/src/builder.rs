//! Verilating, compiling and caching the model library.
//!
//! A build is identified by a key, the SHA-256 of everything that can change
//! the library: the Verilog text, `verilator --version`, `g++ --version`, the
//! shim source and its generated port header, the waivers text, and the
//! verilator and make arguments. The library lives in `<cache>/<name>-<key>/`
//! (`<cache>`: see [`BuildOpts::resolved_cache_dir`]). Nothing here reads a
//! file of the workspace: the shim is compiled in, the RTL and the waivers
//! come from the caller.
//!
//! Concurrency: each key has a lock file `<cache>/<name>-<key>.lock`, locked
//! exclusively (flock) around the check-and-build, so parallel test processes
//! and threads build a key once and the others wait and then hit the cache.
//! A build happens in a fresh temporary directory inside the cache and is
//! renamed to its final name when complete, so a final directory is always
//! complete (even after a crash mid-build, which leaves only a `.tmp-*`).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use sbrp_iface::stimulus::RawStimulus;
use sbrp_iface::{ports, PbIn, PbParams};
use sbrp_tools::{error_lines, Captured, LogFile, Tool, ToolError};
use sha2::{Digest, Sha256};

use crate::ffi::{self, ShimFns};
use crate::top_ports::{
    check_ports, parse_header_ports, ports_from_text, ports_header, ports_to_text,
};
use crate::CosimError;

/// Source of the shim, compiled into every model library (and hashed).
pub(crate) const SHIM_SRC: &str = include_str!("../csrc/shim.cpp");
/// Source of the training run of a profile-guided build (hashed when used).
const TRAIN_SRC: &str = include_str!("../csrc/train.cpp");
/// Cycles of raw stimulus (and its seed) a profile-guided build trains on:
/// enough to reach every branch's usual direction, a fraction of a second.
const TRAIN_CYCLES: usize = 20_000;
const TRAIN_SEED: u64 = 0x5eed;

/// Top module and Verilator prefix.
pub(crate) const TOP: &str = "sbrp_pb";
const PREFIX: &str = "Vsbrp_pb";
/// Name of the library inside a cache entry.
pub(crate) const LIB_NAME: &str = "libsbrp_pb.so";
/// Cache format version: bump to invalidate every cached model.
const CACHE_VERSION: &str = "sbrp-cosim-cache-2";
/// Name of the generated port header the shim includes.
const PORTS_HEADER: &str = "sbrp_ports.h";

/// Environment variable overriding the cache directory.
pub const ENV_CACHE: &str = "SBRP_VERILATOR_CACHE";
/// Environment variable naming the verilator binary (default `verilator` on PATH).
pub const ENV_VERILATOR: &str = "SBRP_VERILATOR";
/// Environment variable setting the parallel compile jobs (default: available cores).
pub const ENV_JOBS: &str = "SBRP_VERILATOR_JOBS";

/// Where the RTL comes from. Either way it has top module `sbrp_pb` and the
/// ports of [`sbrp_iface::ports::PORTS`] for the given parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RtlSource {
    /// Verilog text in memory, the project's own RTL (e.g.
    /// `sbrp_hdl::generate_verilog(params)`), verilated under Verilator's
    /// default warnings plus [`BuildOpts::waivers`]. `name` is the file name
    /// it is written under (e.g. `sbrp_pb.v`, which the generator's waivers
    /// match) and names it in messages and in the cache.
    Verilog { text: String, name: String },
    /// A Verilog file from elsewhere (a hand-edited design, a yosys netlist):
    /// lint, style and UNOPT* warnings off.
    File(PathBuf),
}

/// Build options.
#[derive(Clone, Debug)]
pub struct BuildOpts {
    /// Cache directory; `None`: see [`BuildOpts::resolved_cache_dir`].
    pub cache_dir: Option<PathBuf>,
    /// Verilator configuration text (`.vlt`, e.g. `sbrp_hdl::VERILATOR_WAIVERS`)
    /// given to verilator before the RTL; part of the cache key.
    pub waivers: Option<String>,
    /// The verilator binary (default: `$SBRP_VERILATOR`, else `verilator`).
    pub verilator: PathBuf,
    /// Parallel C++ compile jobs (default: `$SBRP_VERILATOR_JOBS`, else the
    /// available cores). Not part of the cache key.
    pub jobs: usize,
    /// Extra verilator arguments (e.g. `-GW=64`, or a `.vlt` file), part of
    /// the cache key as text: the contents of a file named here are not
    /// hashed.
    pub extra_args: Vec<String>,
    /// Print a line on stderr for each build (not for cache hits).
    pub verbose: bool,
    /// Profile-guided build (default on): compile the model instrumented,
    /// step it through raw stimulus, compile it again with that profile.
    /// Same simulation, about 20% faster stepping (branch layout of the
    /// large straight-line eval), about twice the compile time. Part of the
    /// cache key.
    pub pgo: bool,
}

impl Default for BuildOpts {
    fn default() -> Self {
        let jobs = std::env::var(ENV_JOBS)
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|&j| j > 0)
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            });
        BuildOpts {
            cache_dir: None,
            waivers: None,
            verilator: std::env::var_os(ENV_VERILATOR)
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("verilator")),
            jobs,
            extra_args: Vec::new(),
            verbose: false,
            pgo: true,
        }
    }
}

impl BuildOpts {
    /// The cache directory these options use: `cache_dir`, else
    /// `$SBRP_VERILATOR_CACHE`, else `verilated/` in the cargo target
    /// directory that holds the running binary (the nearest ancestor with
    /// cargo's `CACHEDIR.TAG`), else `$XDG_CACHE_HOME/sbrp/verilated`
    /// (`~/.cache/sbrp/verilated`), else `sbrp-verilated` in the temporary
    /// directory.
    pub fn resolved_cache_dir(&self) -> PathBuf {
        if let Some(d) = &self.cache_dir {
            return d.clone();
        }
        if let Some(d) = std::env::var_os(ENV_CACHE).filter(|d| !d.is_empty()) {
            return PathBuf::from(d);
        }
        let target = std::env::current_exe().ok().and_then(|exe| {
            exe.ancestors()
                .skip(1)
                .find(|d| d.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        });
        if let Some(t) = target {
            return t.join("verilated");
        }
        let user = std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
        match user {
            Some(u) => u.join("sbrp").join("verilated"),
            None => std::env::temp_dir().join("sbrp-verilated"),
        }
    }
}

/// What a build did.
#[derive(Clone, Debug)]
pub struct BuildReport {
    /// The cache entry (holds the library, the Verilog, the build log).
    pub dir: PathBuf,
    /// The model library.
    pub lib_path: PathBuf,
    /// Hex SHA-256 cache key.
    pub key: String,
    /// True when the library came from the cache (no verilator run).
    pub cache_hit: bool,
    /// Time spent verilating and compiling (zero on a cache hit).
    pub build_time: Duration,
    /// Where the RTL came from (its name, or the file's path).
    pub source: String,
}

/// The verilator arguments, without the input files.
fn verilator_args(external: bool, opts: &BuildOpts) -> Vec<String> {
    // No --trace: waveforms are written from the ports in Rust
    // (sbrp_iface::vcd), which keeps builds shorter and has no Verilator
    // writer that can block on a write error (see cosim/README.md).
    let mut a: Vec<String> = [
        "--cc",
        "--exe",
        "-O3",
        "--top-module",
        TOP,
        "--prefix",
        PREFIX,
        "--Mdir",
        "obj",
        "-o",
        LIB_NAME,
        "-CFLAGS",
        // -fvisibility=hidden: only the shim's extern "C" functions are
        // exported, so two loaded models (two configurations) never bind to
        // each other's copy of the Verilator runtime.
        "-fPIC -O2 -fvisibility=hidden",
        "-LDFLAGS",
        "-shared",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if external {
        // An external file (a hand-edited design, a yosys netlist) is not
        // held to the project's lint rules: its lint and style warnings are
        // not what the cosimulation checks, and the waivers are written for
        // the generator's output (they match its file name). Likewise the
        // performance warnings UNOPT/UNOPTFLAT (a block-level combinational
        // cycle, as in rust-hdl's output) only cost speed. Warnings that can
        // mean a simulation mismatch (e.g. MULTIDRIVEN, COMBDLY, LATCH) and
        // errors still stop the build.
        for w in ["-Wno-lint", "-Wno-style", "-Wno-UNOPT", "-Wno-UNOPTFLAT"] {
            a.push(w.into());
        }
    }
    a.extend(opts.extra_args.iter().cloned());
    a
}

/// make variables: verilated.mk puts OPT_FAST after CPPFLAGS (so it would
/// override our -O2 with -Os); the slow (construction-only) code gets -O1.
/// A profile-guided build's `phase` adds its profile flags to the fast
/// (per-cycle) code: `Some(false)` instruments it, `Some(true)` uses the
/// profile (`-fprofile-partial-training`: code the training did not reach
/// stays optimized for speed).
fn make_vars(phase: Option<bool>) -> Vec<String> {
    let fast = match phase {
        None => "OPT_FAST=-O2",
        Some(false) => "OPT_FAST=-O2 -fprofile-generate",
        Some(true) => "OPT_FAST=-O2 -fprofile-use -fprofile-partial-training",
    };
    let mut v: Vec<String> = [fast, "OPT_SLOW=-O1", "OPT_GLOBAL=-O2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if phase == Some(false) {
        // Links libgcov into the instrumented library.
        v.push("USER_LDFLAGS=-fprofile-generate".into());
    }
    v
}

/// Runs a command to its end (`sbrp_tools`), mapping a missing binary to
/// `not_found`.
fn run(
    cmd: &mut Command,
    label: &str,
    not_found: impl FnOnce() -> CosimError,
) -> Result<Captured, CosimError> {
    let tool = Tool::new(cmd.get_program(), "");
    tool.capture(cmd, label, LogFile::None)
        .map_err(|e| match e {
            ToolError::NotFound { .. } => not_found(),
            other => CosimError::Run(other),
        })
}

fn verilator_not_found(bin: &Path) -> CosimError {
    CosimError::VerilatorNotFound(bin.display().to_string())
}

/// `<bin> --version`, cached per binary for the process.
fn tool_version(bin: &Path, not_found: fn(&Path) -> CosimError) -> Result<String, CosimError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap().get(bin) {
        return Ok(v.clone());
    }
    let out = run(Command::new(bin).arg("--version"), "--version", || {
        not_found(bin)
    })?;
    if !out.success() {
        return Err(CosimError::Tool {
            tool: format!("{} --version", bin.display()),
            rtl: String::new(),
            status: out.status.to_string(),
            errors: error_lines(&out.text),
            log: None,
        });
    }
    let v = out.text.trim().to_string();
    cache.lock().unwrap().insert(bin.to_path_buf(), v.clone());
    Ok(v)
}

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> CosimError {
    move |source| CosimError::Io { what, source }
}

/// `s` as a safe file-name part (`.` kept when `dot`), at most 40 characters.
fn sanitize(s: &str, dot: bool) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || (dot && c == '.') {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    // No hidden or parent-directory names.
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "rtl".into()
    } else {
        s
    }
}

/// Everything needed to build one library.
struct Job {
    verilog: String,
    /// Name of the Verilog file in the build directory (the original file
    /// name, so that verilator's messages name it).
    verilog_name: String,
    waivers: Option<String>,
    header: String,
    args: Vec<String>,
    make_vars: Vec<String>,
    /// Profile-guided: the make variables of the instrumented build (then
    /// `make_vars` are those of the final one).
    pgo_gen_vars: Option<Vec<String>>,
    name: String,
    key: String,
    source: String,
}

fn prepare(params: &PbParams, source: &RtlSource, opts: &BuildOpts) -> Result<Job, CosimError> {
    params.validate().map_err(CosimError::Params)?;
    let (verilog, verilog_name, name, src_desc, external) = match source {
        RtlSource::Verilog { text, name } => {
            let file = sanitize(name, true);
            let stem = Path::new(&file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (
                text.clone(),
                file,
                format!("{}-{}", sanitize(&stem, false), params.tag()),
                name.clone(),
                false,
            )
        }
        RtlSource::File(path) => {
            let text = fs::read_to_string(path).map_err(|source| CosimError::RtlFile {
                path: path.clone(),
                source,
            })?;
            let stem = path
                .file_stem()
                .unwrap_or_else(|| OsStr::new("rtl"))
                .to_string_lossy();
            let file_name = path
                .file_name()
                .map(|n| sanitize(&n.to_string_lossy(), true))
                .unwrap_or_else(|| "rtl.v".into());
            (
                text,
                format!("rtl/{file_name}"),
                format!("file-{}", sanitize(&stem, false)),
                path.display().to_string(),
                true,
            )
        }
    };
    let verilator_version = tool_version(&opts.verilator, verilator_not_found)?;
    let cxx_version = tool_version(Path::new("g++"), |_| CosimError::CompilerNotFound)?;
    let waivers = opts.waivers.clone();
    let header = ports_header();
    let args = verilator_args(external, opts);
    let (make_vars, pgo_gen_vars) = if opts.pgo {
        (make_vars(Some(true)), Some(make_vars(Some(false))))
    } else {
        (make_vars(None), None)
    };

    let mut h = Sha256::new();
    let mut part = |label: &str, data: &[u8]| {
        h.update(label.as_bytes());
        h.update((data.len() as u64).to_le_bytes());
        h.update(data);
    };
    part("version", CACHE_VERSION.as_bytes());
    part("verilator", verilator_version.as_bytes());
    part("cxx", cxx_version.as_bytes());
    part("shim", SHIM_SRC.as_bytes());
    part("ports", header.as_bytes());
    part("args", args.join("\0").as_bytes());
    part("make", make_vars.join("\0").as_bytes());
    if let Some(g) = &pgo_gen_vars {
        part("pgo-make", g.join("\0").as_bytes());
        part("pgo-train", TRAIN_SRC.as_bytes());
        part(
            "pgo-stimulus",
            format!("raw {TRAIN_CYCLES} {TRAIN_SEED}").as_bytes(),
        );
    }
    part("waivers", waivers.as_deref().unwrap_or("<none>").as_bytes());
    part("verilog", verilog.as_bytes());
    let digest = h.finalize();
    let key: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Job {
        verilog,
        verilog_name,
        waivers,
        header,
        args,
        make_vars,
        pgo_gen_vars,
        name: format!("{name}-{}", &key[..16]),
        key,
        source: src_desc,
    })
}

/// Builds (or finds in the cache) the library for `params` and `source`,
/// checks its ports against the spec, and loads it.
pub(crate) fn build_and_load(
    params: &PbParams,
    source: &RtlSource,
    opts: &BuildOpts,
) -> Result<(ShimFns, BuildReport), CosimError> {
    let job = prepare(params, source, opts)?;
    let cache = opts.resolved_cache_dir();
    fs::create_dir_all(&cache).map_err(io_err(format!(
        "cannot create cache directory {}",
        cache.display()
    )))?;
    let dir = cache.join(&job.name);
    let lib_path = dir.join(LIB_NAME);

    let mut report = BuildReport {
        dir: dir.clone(),
        lib_path: lib_path.clone(),
        key: job.key.clone(),
        cache_hit: true,
        build_time: Duration::ZERO,
        source: job.source.clone(),
    };
    // Fast path: a final directory is complete (it appears by rename).
    if !lib_path.is_file() {
        let lock_path = cache.join(format!("{}.lock", job.name));
        let lock = fs::File::create(&lock_path)
            .map_err(io_err(format!("cannot create {}", lock_path.display())))?;
        lock.lock()
            .map_err(io_err(format!("cannot lock {}", lock_path.display())))?;
        // Someone may have built it while we waited.
        if !lib_path.is_file() {
            let t0 = Instant::now();
            if opts.verbose {
                eprintln!(
                    "sbrp-cosim: verilating {} ({}) into {}",
                    job.source,
                    params.tag(),
                    dir.display()
                );
            }
            build_locked(&job, params, &cache, &dir, opts)?;
            report.cache_hit = false;
            report.build_time = t0.elapsed();
            if opts.verbose {
                eprintln!(
                    "sbrp-cosim: built {} in {:.1} s",
                    job.name,
                    report.build_time.as_secs_f64()
                );
            }
        }
        // The lock is released when `lock` is dropped (closed).
        drop(lock);
    }

    let ports_file = dir.join("ports.txt");
    let ports = fs::read_to_string(&ports_file)
        .ok()
        .and_then(|s| ports_from_text(&s))
        .ok_or_else(|| CosimError::Load(format!("cannot read {}", ports_file.display())))?;
    check_ports(&ports, params).map_err(CosimError::Ports)?;
    let fns = load(&lib_path)?;
    Ok((fns, report))
}

/// Runs verilator and make in a temporary directory in `cache`, then renames
/// it to `dir`. Called with the key's lock held.
fn build_locked(
    job: &Job,
    params: &PbParams,
    cache: &Path,
    dir: &Path,
    opts: &BuildOpts,
) -> Result<(), CosimError> {
    // Leftovers of builds of this key that died (we hold its lock, so no
    // live build uses them).
    let prefix = format!(".tmp-{}-", job.name);
    if let Ok(rd) = fs::read_dir(cache) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(cache)
        .map_err(io_err(format!(
            "cannot create a temporary directory in {}",
            cache.display()
        )))?;
    let t = tmp.path();
    let write = |name: &str, text: &str| {
        fs::write(t.join(name), text)
            .map_err(io_err(format!("cannot write {}", t.join(name).display())))
    };
    if let Some(parent) = Path::new(&job.verilog_name).parent() {
        fs::create_dir_all(t.join(parent))
            .map_err(io_err(format!("cannot create {}", t.display())))?;
    }
    write(&job.verilog_name, &job.verilog)?;
    write("shim.cpp", SHIM_SRC)?;
    write(PORTS_HEADER, &job.header)?;
    let mut inputs: Vec<String> = Vec::new();
    if let Some(w) = &job.waivers {
        write("verilator_waivers.vlt", w)?;
        inputs.push("verilator_waivers.vlt".into());
    }
    inputs.push(job.verilog_name.clone());
    inputs.push("shim.cpp".into());

    let mut log = String::new();
    let failed_log = cache.join(format!("failed-{}.log", job.name));

    // 1. Verilate.
    let mut cmd = Command::new(&opts.verilator);
    cmd.current_dir(t).args(&job.args).args(&inputs);
    let _ = writeln!(log, "$ {cmd:?}");
    let out = run(&mut cmd, "verilator", || {
        verilator_not_found(&opts.verilator)
    })?;
    log.push_str(&out.text);
    if !out.success() {
        let _ = fs::write(&failed_log, &log);
        return Err(CosimError::Tool {
            tool: "verilator".into(),
            rtl: job.source.clone(),
            status: out.status.to_string(),
            errors: error_lines(&out.text),
            log: Some(failed_log),
        });
    }

    // 2. Check the ports before compiling (a clearer error than the shim's).
    let header_path = t.join("obj").join(format!("{PREFIX}.h"));
    let header = fs::read_to_string(&header_path)
        .map_err(io_err(format!("cannot read {}", header_path.display())))?;
    let ports = parse_header_ports(&header).map_err(CosimError::Ports)?;
    check_ports(&ports, params).map_err(CosimError::Ports)?;
    write("ports.txt", &ports_to_text(&ports))?;

    // 3. Compile and link the shared library. A profile-guided build first
    // compiles it instrumented, steps it through raw stimulus in a child
    // process (which writes the profile, .gcda, beside the objects), then
    // compiles it again with that profile.
    let obj = t.join("obj");
    let make = |vars: &[String]| {
        let mut cmd = Command::new("make");
        cmd.current_dir(&obj)
            .arg("-f")
            .arg(format!("{PREFIX}.mk"))
            .arg(format!("-j{}", opts.jobs.max(1)))
            .args(vars)
            .arg(LIB_NAME);
        // The Verilator runtime compiles to the same objects for every
        // configuration: with ccache present, compile it once per machine.
        // Output is identical, so this is not part of the cache key. (ccache
        // hashes the profile of a -fprofile-use compile, and the directory of
        // a -fprofile-generate one, so profiles never mix.)
        if which("ccache") {
            cmd.arg("OBJCACHE=ccache")
                .env("CCACHE_NOHASHDIR", "1")
                .env("CCACHE_BASEDIR", &obj);
        }
        cmd
    };
    // Runs one command of the build into the log; `tool` names it in errors.
    let mut step = |cmd: &mut Command, tool: &str| -> Result<(), CosimError> {
        let _ = writeln!(log, "$ {cmd:?}");
        let out = run(cmd, tool, || match tool {
            "make" => CosimError::MakeNotFound,
            // g++; the trainer is built just before it runs.
            _ => CosimError::CompilerNotFound,
        })?;
        log.push_str(&out.text);
        if out.success() {
            return Ok(());
        }
        let _ = fs::write(&failed_log, &log);
        Err(CosimError::Tool {
            tool: match tool {
                "make" => "C++ compile (make)".into(),
                other => other.into(),
            },
            rtl: job.source.clone(),
            status: out.status.to_string(),
            errors: error_lines(&out.text),
            log: Some(failed_log.clone()),
        })
    };
    if let Some(gen_vars) = &job.pgo_gen_vars {
        step(&mut make(gen_vars), "make")?;
        write("train.cpp", TRAIN_SRC)?;
        write_train_inputs(&t.join("train.bin"), params)?;
        step(
            Command::new("g++").current_dir(t).args([
                "-O1",
                "-o",
                "sbrp_train",
                "train.cpp",
                "-ldl",
            ]),
            "g++",
        )?;
        step(
            Command::new(t.join("sbrp_train"))
                .current_dir(t)
                .arg(obj.join(LIB_NAME))
                .arg("train.bin"),
            "profile training run",
        )?;
        // Keep only the profile: every object is compiled again (the
        // unchanged ones come from ccache when present).
        let mut profiles = 0;
        for e in fs::read_dir(&obj)
            .map_err(io_err(format!("cannot list {}", obj.display())))?
            .flatten()
        {
            let path = e.path();
            match path.extension().and_then(OsStr::to_str) {
                Some("gcda") => profiles += 1,
                Some("o" | "a" | "so") => fs::remove_file(&path)
                    .map_err(io_err(format!("cannot remove {}", path.display())))?,
                _ => {}
            }
        }
        if profiles == 0 {
            let _ = writeln!(log, "the training run wrote no profile (.gcda)");
            let _ = fs::write(&failed_log, &log);
            return Err(CosimError::Tool {
                tool: "profile training run".into(),
                rtl: job.source.clone(),
                status: "no profile written".into(),
                errors: String::new(),
                log: Some(failed_log),
            });
        }
    }
    step(&mut make(&job.make_vars), "make")?;
    let _ = fs::remove_file(&failed_log);
    fs::rename(t.join("obj").join(LIB_NAME), t.join(LIB_NAME))
        .map_err(io_err(format!("cannot move {LIB_NAME} out of obj/")))?;
    write("build.log", &log)?;
    write(
        "key.txt",
        &format!(
            "key {}\nsource {}\nverilator args {}\nmake vars {}\nprofile {}\nwaivers {}\n",
            job.key,
            job.source,
            job.args.join(" "),
            job.make_vars.join(" "),
            match &job.pgo_gen_vars {
                Some(g) => format!(
                    "trained with make vars {} on {TRAIN_CYCLES} cycles of raw stimulus (seed {TRAIN_SEED:#x})",
                    g.join(" ")
                ),
                None => "none".into(),
            },
            if job.waivers.is_some() {
                "verilator_waivers.vlt (from BuildOpts::waivers)"
            } else {
                "none"
            }
        ),
    )?;
    // The objects and the training run are not needed any more (a few MB
    // per configuration).
    let _ = fs::remove_dir_all(t.join("obj"));
    for f in ["train.cpp", "train.bin", "sbrp_train"] {
        let _ = fs::remove_file(t.join(f));
    }

    // A final directory without its library (deleted by hand) would block the rename.
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(io_err(format!("cannot remove {}", dir.display())))?;
    }
    let tmp_path = tmp.keep();
    fs::rename(&tmp_path, dir).map_err(|e| {
        let _ = fs::remove_dir_all(&tmp_path);
        io_err(format!(
            "cannot rename {} to {}",
            tmp_path.display(),
            dir.display()
        ))(e)
    })?;
    Ok(())
}

/// Writes the inputs of a profile-guided build's training run: a reset, then
/// open-loop raw stimulus (`sbrp_iface::stimulus`), each input masked to its
/// port width, in the format `csrc/train.cpp` reads.
fn write_train_inputs(path: &Path, params: &PbParams) -> Result<(), CosimError> {
    let masks: Vec<u64> = ports::inputs().iter().map(|p| p.mask(params)).collect();
    let mut stim = RawStimulus::new(params, TRAIN_SEED);
    let mut bytes = Vec::with_capacity((TRAIN_CYCLES + 1) * ports::N_IN * 8);
    for inp in std::iter::once(PbIn::reset()).chain((0..TRAIN_CYCLES).map(|_| stim.next_input())) {
        for (v, m) in inp.values().iter().zip(&masks) {
            bytes.extend_from_slice(&(v & m).to_ne_bytes());
        }
    }
    fs::write(path, bytes).map_err(io_err(format!("cannot write {}", path.display())))
}

/// Loads a model library once per process and resolves the shim.
///
/// Libraries are never unloaded: a model's code must outlive every model
/// instance and any thread-local state the Verilator runtime registered, and
/// a process loads at most a few configurations.
fn load(path: &Path) -> Result<ShimFns, CosimError> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, ShimFns>>> = OnceLock::new();
    let loaded = LOADED.get_or_init(Default::default);
    let mut map = loaded.lock().unwrap();
    if let Some(f) = map.get(path) {
        return Ok(*f);
    }
    // SAFETY: the library is one this crate built from csrc/shim.cpp and the
    // Verilated model; its initializers only set up the Verilator runtime.
    let lib = unsafe {
        libloading::os::unix::Library::open(
            Some(path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| CosimError::Load(format!("cannot load {}: {e}", path.display())))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(libloading::Library::from(lib)));
    // SAFETY: as above, and `lib` is leaked, so it stays loaded.
    let fns = unsafe { ffi::resolve(lib)? };
    map.insert(path.to_path_buf(), fns);
    Ok(fns)
}

/// True when `prog` is found on PATH.
fn which(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(prog).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shim has no per-port code of its own: it copies ports only
    /// through the generated header, so it cannot disagree with the table.
    #[test]
    fn shim_names_no_port_but_the_clock() {
        assert!(SHIM_SRC.contains(&format!("#include \"{PORTS_HEADER}\"")));
        assert!(SHIM_SRC.contains("sbrp_set_inputs(t, in)"));
        assert!(SHIM_SRC.contains("sbrp_get_outputs(t, out)"));
        for p in sbrp_iface::ports::PORTS {
            let uses = SHIM_SRC.contains(&format!("->{}", p.name))
                || SHIM_SRC.contains(&format!(".{} ", p.name));
            assert!(!uses, "shim.cpp names port {} itself", p.name);
        }
    }

    #[test]
    fn error_lines_keep_verilator_messages() {
        let out = "make stuff\n%Error: x.v:3:5: syntax error, unexpected foo\n    3 | bad\n      |     ^~~\n%Error: Exiting due to 1 error(s)\nother\n";
        let e = error_lines(out);
        assert!(e.contains("syntax error, unexpected foo"));
        assert!(e.contains("3 | bad"));
        assert!(!e.contains("make stuff"));
    }
}
