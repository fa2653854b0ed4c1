#!/usr/bin/tcsh -f
# qflow project variables of `sbrp area --route` (silicon/src/route.rs copies
# this file into the qflow project it makes; qflow's scripts source it).
#
# Placement density: qflow's decongest adds fill cells until the cells cover
# this fraction of the core. Graywolf's own packing (about 94% on this
# netlist) left 112 nets unroutable after qrouter's first stage and one net
# that stage 2 did not route in 7 minutes; 60% routes.
set initial_density = 0.6
