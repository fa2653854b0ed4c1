//! `SbrpPb::hdl` returns the kernel Verilog built by one fixed instance (so
//! that only one instance compiles the large AST builder). That is right only
//! while the kernel's Verilog text does not depend on the parameters: this
//! checks it on instances that differ from the fixed one in every parameter.

use rust_hdl::core::prelude::*;
use sbrp_hdl::SbrpPb;
use sbrp_iface::FlushPolicy;

fn same_as_template<
    const W: usize,
    const WB: usize,
    const IW: usize,
    const LW: usize,
    const A: usize,
>() {
    let u = SbrpPb::<W, WB, IW, LW, A>::new(3, FlushPolicy::Lazy);
    let own = format!("{:?}", u.own_kernel_verilog());
    let template = format!("{:?}", Logic::hdl(&u));
    assert_eq!(own, template, "W {W} IW {IW} LW {LW} A {A}");
}

#[test]
fn kernel_verilog_does_not_depend_on_parameters() {
    same_as_template::<64, 6, 9, 10, 8>();
    same_as_template::<8, 3, 5, 7, 8>();
}
