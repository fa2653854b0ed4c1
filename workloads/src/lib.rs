//! The SBRP paper's six applications as program generators
//! (`../shared/notes/sbrp-benchmarks.md` §2; `docs/model.md`,
//! "Benchmarks"): each app computes its kernels' real data, emits the timed
//! run, a run cut at the artifact's crash point, recovery kernels for a PM
//! image, and checks its invariant on an image.

pub mod gpkvs;
pub mod hm;
pub mod image;
pub mod incremental;
pub mod layout;
pub mod log;
pub mod mq;
pub mod reduction;
pub mod scan;
pub mod srad;

pub use image::{Durable, PmImage};
pub use incremental::Incremental;

use sbrp_trace::program::Program;

/// Which binary of the artifact a program corresponds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Build {
    /// The `*_gpu` binary, run under SBRP and epoch.
    Gpu,
    /// The GPM build (`-DGPM_EPOCH_MODEL`): a `__threadfence` after every
    /// persistency op (and where the note places more).
    Gpm,
}

/// One application at one input size.
pub trait App: Send + Sync {
    /// Its command-line name (`gpkvs`, `hm`, `srad`, `reduction`, `mq`, `scan`).
    fn name(&self) -> &'static str;
    /// The input size it was built for, in the app's unit (`size_unit`).
    fn size(&self) -> u64;
    fn size_unit(&self) -> &'static str;
    /// The PM image before the timed run (host-initialised data).
    fn initial_image(&self) -> PmImage;
    /// The timed run: every kernel the artifact times, CTA by CTA.
    fn program(&self, build: Build) -> Box<dyn Program + '_>;
    /// The device-scope variant the paper's Figure 7 runs (the artifact's
    /// `*_dev` binaries; the model's `sbrp-device` promotes the scopes): the
    /// same program unless the variant changes more than scopes.
    fn program_dev(&self, build: Build) -> Box<dyn Program + '_> {
        self.program(build)
    }
    /// The PM image a crash-free run leaves (computed by the generator).
    fn final_image(&self) -> PmImage;
    /// The kernels of the artifact's recovery binary before its recovery
    /// kernels: the run cut just before commit.
    fn crash_program(&self) -> Box<dyn Program + '_>;
    /// The PM image of `crash_program` with all its persists durable.
    fn crash_image(&self) -> PmImage;
    /// The recovery kernels for a durable image.
    fn recovery(&self, image: &PmImage) -> Box<dyn Program + '_>;
    /// The image after recovery (the recovery kernels' effect).
    fn recover(&self, image: &PmImage) -> PmImage;
    /// The invariant the app's ordering protects: Err says what is wrong.
    fn check(&self, image: &PmImage) -> Result<(), String>;
    /// `check` (before and after `recover`) kept up to date from `img` on,
    /// for campaigns at every durable point; None: only `check`.
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        let _ = img;
        None
    }
    /// A copy of `image` with the invariant broken (a negative control).
    fn corrupt(&self, image: &PmImage) -> PmImage;
}

/// The apps, by command-line name, in the paper's order.
pub const APPS: &[&str] = &["gpkvs", "hm", "srad", "reduction", "mq", "scan"];

/// Variants of the apps reachable by name (not in the study): programs
/// with a deliberate bug, for checkers and invariants to catch.
/// `reduction-block-final`: Reduction with each block's result released at
/// block scope, the paper's scoped persistency bug (§5.3; where the release
/// is: `reduction` module docs).
pub const VARIANTS: &[&str] = &[reduction::VARIANT_BLOCK_FINAL];

/// App (or variant) `name` at input size `size` (None: the artifact's).
pub fn app(name: &str, size: Option<u64>) -> Result<Box<dyn App>, String> {
    Ok(match name {
        "gpkvs" => Box::new(gpkvs::Gpkvs::new(size)?),
        "hm" => Box::new(hm::Hm::new(size)?),
        "srad" => Box::new(srad::Srad::new(size)?),
        "reduction" => Box::new(reduction::Reduction::new(size)?),
        "mq" => Box::new(mq::Mq::new(size)?),
        "scan" => Box::new(scan::Scan::new(size)?),
        reduction::VARIANT_BLOCK_FINAL => Box::new(reduction::Reduction::block_final(size)?),
        _ => {
            return Err(format!(
                "unknown app `{name}`: one of {} (variants: {})",
                APPS.join(", "),
                VARIANTS.join(", ")
            ))
        }
    })
}
