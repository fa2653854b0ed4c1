//! Running an external tool: capture its output, keep a log, and turn a
//! missing binary or a failure into a typed error.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::fs::write_atomic;
use crate::lines::error_lines;

/// Why a tool could not do its job.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The binary is not there; `hint` says how to install it.
    #[error("`{tool}` not found: {hint}")]
    NotFound { tool: String, hint: String },
    /// The binary exists but could not be started (permissions, ...).
    #[error("cannot run `{tool}`: {error}")]
    Start { tool: String, error: std::io::Error },
    /// The tool ran and failed; `errors` are its own error lines, `log`
    /// the file holding its whole output (for callers that keep it; not in
    /// the message, as it may be in a scratch directory already removed).
    #[error("{tool} failed ({status}):\n{errors}")]
    Failed {
        tool: String,
        status: String,
        errors: String,
        log: Option<PathBuf>,
    },
    /// The log could not be written or read.
    #[error("log of {tool}: {error}")]
    Log {
        tool: String,
        error: crate::fs::FsError,
    },
}

/// Where the full output of a run goes.
#[derive(Clone, Copy, Debug)]
pub enum LogFile<'a> {
    /// Nowhere.
    None,
    /// We write the captured stdout and stderr there.
    Write(&'a Path),
    /// The tool writes its own log there (e.g. `yosys -l FILE`); it is read
    /// back and put before the captured output.
    ByTool(&'a Path),
}

/// What a run printed, and how it ended.
#[derive(Clone, Debug)]
pub struct Captured {
    /// The tool's label (as in errors).
    pub tool: String,
    pub status: ExitStatus,
    /// The tool's own log (for [`LogFile::ByTool`]), then stdout, then stderr.
    pub text: String,
    /// The log file, when there is one.
    pub log: Option<PathBuf>,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// Itself when the tool succeeded, else [`ToolError::Failed`] with its error lines.
    pub fn check(self) -> Result<Captured, ToolError> {
        if self.success() {
            return Ok(self);
        }
        Err(ToolError::Failed {
            tool: self.tool,
            status: self.status.to_string(),
            errors: error_lines(&self.text),
            log: self.log,
        })
    }
}

/// An external program and how to get it when it is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    /// What to run: a name looked up on `PATH`, or a path.
    pub program: PathBuf,
    /// Installation hint for [`ToolError::NotFound`] (a package, an
    /// environment variable; no command-line flags of our programs).
    pub hint: String,
}

impl Tool {
    pub fn new(program: impl Into<PathBuf>, hint: impl Into<String>) -> Tool {
        Tool {
            program: program.into(),
            hint: hint.into(),
        }
    }

    /// The program named by the environment variable `env` when it is set,
    /// else `default`.
    pub fn from_env(env: &str, default: &str, hint: impl Into<String>) -> Tool {
        let program = std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from);
        Tool::new(program, hint)
    }

    /// A command that runs this tool.
    pub fn command(&self) -> Command {
        Command::new(&self.program)
    }

    fn name(&self) -> String {
        self.program.display().to_string()
    }

    /// Runs `cmd` (built from [`Tool::command`]) to the end and keeps its
    /// output, whatever its exit status; `label` names it in errors. Errors
    /// only when it cannot start or the log cannot be written.
    pub fn capture(
        &self,
        cmd: &mut Command,
        label: &str,
        log: LogFile<'_>,
    ) -> Result<Captured, ToolError> {
        let out = cmd.output().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ToolError::NotFound {
                    tool: self.name(),
                    hint: self.hint.clone(),
                }
            } else {
                ToolError::Start {
                    tool: self.name(),
                    error: e,
                }
            }
        })?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        let log_path = match log {
            LogFile::None => None,
            LogFile::Write(p) => {
                write_atomic(p, text.as_bytes()).map_err(|error| ToolError::Log {
                    tool: label.to_string(),
                    error,
                })?;
                Some(p.to_path_buf())
            }
            LogFile::ByTool(p) => {
                // A tool that stopped early may have written no log.
                if let Ok(own) = std::fs::read_to_string(p) {
                    text = own + &text;
                }
                Some(p.to_path_buf())
            }
        };
        Ok(Captured {
            tool: label.to_string(),
            status: out.status,
            text,
            log: log_path,
        })
    }

    /// [`Tool::capture`], then a non-zero exit becomes [`ToolError::Failed`].
    pub fn run(
        &self,
        cmd: &mut Command,
        label: &str,
        log: LogFile<'_>,
    ) -> Result<Captured, ToolError> {
        self.capture(cmd, label, log)?.check()
    }

    /// What the tool prints for `arg` (e.g. `--version`), trimmed: checks
    /// that it runs, and identifies it (e.g. in a build cache key).
    pub fn version(&self, arg: &str) -> Result<String, ToolError> {
        let label = format!("{} {arg}", self.name());
        let c = self.run(self.command().arg(arg), &label, LogFile::None)?;
        Ok(c.text.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> (Tool, Command) {
        let t = Tool::new("sh", "install a POSIX shell");
        let mut c = t.command();
        c.arg("-c").arg(script);
        (t, c)
    }

    #[test]
    fn missing_binary_is_not_found_with_its_hint() {
        let t = Tool::new(
            "/nonexistent/yosys",
            "apt-get install yosys, or set SBRP_YOSYS",
        );
        let e = t.version("-V").unwrap_err();
        match &e {
            ToolError::NotFound { tool, hint } => {
                assert_eq!(tool, "/nonexistent/yosys");
                assert!(hint.contains("SBRP_YOSYS"));
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
        assert!(e.to_string().contains("apt-get install yosys"), "{e}");
    }

    #[test]
    fn failure_keeps_only_error_lines_and_writes_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("tool.log");
        let (t, mut c) = sh("echo progress; echo 'ERROR: it broke' >&2; exit 3");
        let e = t.run(&mut c, "the tool", LogFile::Write(&log)).unwrap_err();
        let ToolError::Failed {
            tool,
            status,
            errors,
            log: l,
        } = &e
        else {
            panic!("expected Failed, got {e:?}");
        };
        assert_eq!(tool, "the tool");
        assert!(status.contains('3'), "{status}");
        assert!(errors.contains("ERROR: it broke"), "{errors}");
        assert_eq!(l.as_deref(), Some(log.as_path()));
        let full = std::fs::read_to_string(&log).unwrap();
        assert!(
            full.contains("progress") && full.contains("it broke"),
            "{full}"
        );
        assert!(e.to_string().starts_with("the tool failed"), "{e}");
    }

    #[test]
    fn capture_returns_a_failed_run_and_reads_the_tools_own_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("own.log");
        let script = format!(
            "echo from-log > {}; echo from-stdout; exit 1",
            log.display()
        );
        let (t, mut c) = sh(&script);
        let r = t.capture(&mut c, "sh", LogFile::ByTool(&log)).unwrap();
        assert!(!r.success());
        assert_eq!(r.text, "from-log\nfrom-stdout\n");
        assert!(r.check().is_err());
    }

    #[test]
    fn version_is_the_trimmed_output() {
        let (t, _) = sh("");
        let mut c = t.command();
        c.arg("-c").arg("echo ' v1.2'; echo built");
        let r = t.run(&mut c, "sh", LogFile::None).unwrap();
        assert_eq!(r.text.trim(), "v1.2\nbuilt");
        let e = Tool::new("false", "hint").version("--version").unwrap_err();
        assert!(matches!(e, ToolError::Failed { .. }), "{e:?}");
    }

    #[test]
    fn from_env_prefers_the_variable() {
        let t = Tool::from_env("SBRP_TOOLS_TEST_UNSET_VARIABLE", "yosys", "hint");
        assert_eq!(t.program, PathBuf::from("yosys"));
        let t = Tool::from_env("PATH", "yosys", "hint");
        assert_ne!(t.program, PathBuf::from("yosys"));
    }
}
