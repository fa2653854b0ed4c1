//! Tests of the program file form, the litmus conversion and the synthetic
//! program (`docs/trace-format.md`, "Programs").
