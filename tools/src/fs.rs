//! Files and directories of a tool run: scratch directories that are
//! removed after use, and writes that leave no partial file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A file-system operation that failed, with the path it was about.
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {}: {error}", path.display())]
pub struct FsError {
    /// What was being done ("write", "create", "read").
    pub what: &'static str,
    pub path: PathBuf,
    pub error: std::io::Error,
}

impl FsError {
    fn new(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> FsError {
        let path = path.to_path_buf();
        move |error| FsError { what, path, error }
    }
}

/// Whether `path` may be written by a rename over it: absent, or a regular
/// file (a symbolic link is followed). A device, directory, pipe or socket
/// is refused: renaming a file over `/dev/null` would replace the node.
pub fn check_output(path: &Path) -> Result<(), FsError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(FsError {
            what: "write",
            path: path.to_path_buf(),
            error: std::io::Error::other(
                "not a regular file (a device, directory, pipe or socket): refusing to replace it",
            ),
        }),
        _ => Ok(()),
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// renamed over it: readers see the old file or the whole new one, and a
/// failure leaves no partial file. Only over a regular file
/// ([`check_output`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    write_all_atomic(&[(path, bytes)])
}

/// Writes every file or none: each goes to a uniquely named temporary file
/// beside it; only when all are written are they renamed into place (a
/// rename that then fails removes the files already renamed). Every path
/// must pass [`check_output`] first.
pub fn write_all_atomic(files: &[(&Path, &[u8])]) -> Result<(), FsError> {
    for (path, _) in files {
        check_output(path)?;
    }
    let mut tmps = Vec::new();
    for (path, bytes) in files {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".sbrp-tmp-")
            .tempfile_in(dir)
            .map_err(FsError::new("write", path))?;
        tmp.write_all(bytes).map_err(FsError::new("write", path))?;
        // A temporary file is private (0600); the output gets the mode of
        // the file it replaces, else that of a new file (0644).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode());
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
                .map_err(FsError::new("write", path))?;
        }
        tmp.as_file()
            .sync_all()
            .map_err(FsError::new("write", path))?;
        tmps.push(tmp);
    }
    let mut done: Vec<&Path> = Vec::new();
    for ((path, _), tmp) in files.iter().zip(tmps) {
        if let Err(e) = tmp.persist(path) {
            for d in done {
                let _ = std::fs::remove_file(d);
            }
            return Err(FsError::new("write", path)(e.error));
        }
        done.push(path);
    }
    Ok(())
}

/// A scratch directory under the system's temporary directory, removed with
/// everything in it when dropped; [`Scratch::publish`] copies what should
/// be kept into an output directory.
#[derive(Debug)]
pub struct Scratch {
    dir: TempDir,
}

impl Scratch {
    /// A new directory named `sbrp-<what>-XXXXXX`.
    pub fn new(what: &str) -> Result<Scratch, FsError> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("sbrp-{what}-"))
            .tempdir()
            .map_err(FsError::new("create", &std::env::temp_dir()))?;
        Ok(Scratch { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies `files` (names in the scratch directory; missing ones are
    /// skipped) into `out`, created if needed, each file atomically.
    /// Returns the names copied.
    pub fn publish(&self, out: &Path, files: &[&str]) -> Result<Vec<String>, FsError> {
        std::fs::create_dir_all(out).map_err(FsError::new("create", out))?;
        let mut copied = Vec::new();
        for f in files {
            let src = self.path().join(f);
            if !src.is_file() {
                continue;
            }
            let bytes = std::fs::read(&src).map_err(FsError::new("read", &src))?;
            write_atomic(&out.join(f), &bytes)?;
            copied.push((*f).to_string());
        }
        Ok(copied)
    }

    /// [`Scratch::publish`] of every file of the scratch directory (not
    /// sub-directories), in name order.
    pub fn publish_all(&self, out: &Path) -> Result<Vec<String>, FsError> {
        let mut names = Vec::new();
        for e in std::fs::read_dir(self.path()).map_err(FsError::new("read", self.path()))? {
            let e = e.map_err(FsError::new("read", self.path()))?;
            if e.path().is_file() {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        self.publish(out, &refs)
    }

    /// Keeps the directory where it is instead of removing it (to look at a
    /// failed run); returns its path.
    pub fn keep(self) -> PathBuf {
        self.dir.keep()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_whole_files_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.txt");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "second");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "a temporary file was left behind");
    }

    #[test]
    fn write_atomic_into_a_missing_directory_fails_without_a_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("no/such/dir/report.txt");
        let e = write_atomic(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("report.txt"), "{e}");
        assert!(!p.exists());
    }

    #[test]
    fn only_regular_files_are_replaced() {
        let d = tempfile::tempdir().unwrap();
        // A directory stands in for a device node (the test may not be root).
        let sub = d.path().join("dir");
        std::fs::create_dir(&sub).unwrap();
        let e = write_atomic(&sub, b"x").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(sub.is_dir());
        #[cfg(unix)]
        {
            let e = check_output(Path::new("/dev/null")).unwrap_err();
            assert!(e.to_string().contains("/dev/null"), "{e}");
        }
        // Two files, one refused: neither is written, no temporary is left.
        let a = d.path().join("a.json");
        let e = write_all_atomic(&[(&a, b"a"), (&sub, b"b")]).unwrap_err();
        assert!(e.to_string().contains("dir"), "{e}");
        assert!(!a.exists());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        // An unrelated `a.json.part` is left alone.
        let part = d.path().join("a.json.part");
        std::fs::write(&part, "mine").unwrap();
        write_all_atomic(&[(&a, b"a")]).unwrap();
        assert_eq!(std::fs::read_to_string(&part).unwrap(), "mine");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a");
        // A new file is readable by others, a replaced one keeps its mode.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&a), 0o644);
            std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o600)).unwrap();
            write_atomic(&a, b"again").unwrap();
            assert_eq!(mode(&a), 0o600);
        }
    }

    #[test]
    fn scratch_is_removed_on_drop_and_publishes_its_files() {
        let s = Scratch::new("test").unwrap();
        let path = s.path().to_path_buf();
        std::fs::write(path.join("a.log"), "a").unwrap();
        std::fs::write(path.join("b.v"), "b").unwrap();
        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("new");
        let got = s.publish(&dest, &["a.log", "missing.txt"]).unwrap();
        assert_eq!(got, ["a.log"]);
        assert!(dest.join("a.log").is_file() && !dest.join("b.v").exists());
        assert_eq!(s.publish_all(&dest).unwrap(), ["a.log", "b.v"]);
        drop(s);
        assert!(!path.exists(), "scratch directory left behind");
    }

    #[test]
    fn kept_scratch_stays() {
        let s = Scratch::new("keep").unwrap();
        let p = s.keep();
        assert!(p.is_dir());
        std::fs::remove_dir_all(&p).unwrap();
    }
}
