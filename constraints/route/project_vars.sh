#!/usr/bin/tcsh -f
# qflow project variables of `sbrp area --route` (silicon/src/route.rs copies
# this file into the qflow project it makes; qflow's scripts source it).
#
# Placement density: qflow's decongest adds fill cells until the cells cover
# this fraction of the core. On the 16-entry / 4-warp unit, graywolf's own
# packing (about 94%) left 112 nets to qrouter's rip-up stage and the run
# had not converged after 7 minutes; at 60% stage 1 leaves 48 and stage 2
# routes them all (docs/hardware.md, section 2).
set initial_density = 0.6
