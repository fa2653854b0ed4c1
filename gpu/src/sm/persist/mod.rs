//! The seam between the SM and the persistency models (`docs/model.md`,
//! "Persistency models"): one hook per row of that section's table (PM
//! store, ordering op, barrier, non-persistent fence, kernel end, cycle,
//! scope). Each model is one file; `Model` names them in configurations
//! and [`Model::persist`] finds a model's hooks, so nothing else matches on
//! the model.
//!
//! - `sbrp.rs`: the persist buffer unit (and its device-scope variant).
//! - `table.rs`: unbuffered models given as step lists per op (`epoch.rs`,
//!   `gpm.rs`, `spb.rs`: Gope et al.'s scoped persist barriers).

mod epoch;
mod gpm;
mod sbrp;
mod spb;
mod table;

use sbrp_trace::check;
use sbrp_trace::program::Instr;
use serde::{Deserialize, Serialize};

pub use super::steps::Step;
use super::{Ctx, Sm};

pub use table::Table;

/// The persistency model (the configuration's `model`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Scoped buffered release persistency: a persist buffer per SM [§5, §6].
    #[default]
    Sbrp,
    /// SBRP with every block-scope operation promoted to device scope [§7.2, Fig. 7].
    SbrpDevice,
    /// Epoch persistency: ordering points flush the SM's dirty PM lines, wait,
    /// and invalidate the L1's PM lines [§7].
    Epoch,
    /// GPM: epoch plus a device fence after every persistency op, which also
    /// flushes volatile lines and invalidates the whole L1 [§4, §7]. PM-far only.
    Gpm,
    /// Scoped persist barriers (Gope et al., GPGPU'18): unbuffered
    /// work-item, work-group and kernel barriers that persist at once.
    Spb,
}

impl Model {
    /// Its name in configurations (`model = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Model::Sbrp => "sbrp",
            Model::SbrpDevice => "sbrp-device",
            Model::Epoch => "epoch",
            Model::Gpm => "gpm",
            Model::Spb => "spb",
        }
    }

    /// The model's hooks.
    pub fn persist(self) -> &'static dyn Persist {
        match self {
            Model::Sbrp => &sbrp::SBRP,
            Model::SbrpDevice => &sbrp::SBRP_DEVICE,
            Model::Epoch => &epoch::EPOCH,
            Model::Gpm => &gpm::GPM,
            Model::Spb => &spb::SPB,
        }
    }
}

/// What a persistency model does at each point where the SM asks it.
/// Hooks that act take the SM and do the model's part there.
pub trait Persist: Sync {
    /// Each SM has a persist buffer unit (`Gpu::new` builds one per SM).
    fn has_unit(&self) -> bool {
        false
    }
    /// Block scope acts (and is recorded) as device scope.
    fn promotes(&self) -> bool {
        false
    }
    /// Runs only with PM-far (`GpuConfig::validate` refuses PM-near).
    fn far_only(&self) -> bool {
        false
    }
    /// The persistency checker's rules that hold under this model.
    fn checker(&self) -> check::Model;
    /// A PM store (or a release's flag store) whose lines are coalesced in
    /// warp `w`'s `acc`; false if it could not issue.
    fn pm_store(&self, sm: &mut Sm, cx: &mut Ctx, w: usize) -> bool;
    /// oFence, dFence, pAcq, pRel or a non-persistent fence at its start.
    /// When it is ordered the warp's phase becomes `Ordered`, and the
    /// instruction goes on (poll, flag store, [`Persist::fence`]).
    fn ordering(&self, sm: &mut Sm, cx: &mut Ctx, w: usize, i: &Instr);
    /// A non-persistent fence, once ordered: its own steps (None: done).
    fn fence(&self) -> Option<&'static [Step]> {
        None
    }
    /// A warp reaching `bar`: the model's part, then
    /// [`Sm::arrive`](super::Sm) (at once, or when the phase is `Ordered`).
    fn barrier(&self, sm: &mut Sm, cx: &mut Ctx, w: usize);
    /// Steps each warp runs when its barrier releases it (None: it goes on).
    fn after_barrier(&self) -> Option<&'static [Step]> {
        None
    }
    /// The model's part of an SM cycle, after the warps issued.
    fn cycle(&self, sm: &mut Sm, cx: &mut Ctx);
    /// The model's part of kernel end, before the L1 writes back its
    /// volatile lines and drops every clean line.
    fn kernel_end(&self, sm: &mut Sm, cx: &mut Ctx);
    /// Nothing of the model's left to drain on the SM (besides PM writes
    /// outstanding and live warps, which the SM checks).
    fn drained(&self, sm: &Sm) -> bool;
}
