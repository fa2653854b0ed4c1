//! HM (placeholder while being written).
