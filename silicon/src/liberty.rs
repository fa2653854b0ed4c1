//! What the flow needs of a liberty file: cell areas, output pins,
//! sequential cells. A line-based reader, enough for the OSU libraries
//! (one attribute per line).

use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub struct Liberty {
    pub area: HashMap<String, f64>,
    pub outputs: HashMap<String, Vec<String>>,
    pub sequential: Vec<String>,
}

/// `kw ( name )` → `name`.
fn group_name(l: &str, kw: &str) -> Option<String> {
    let rest = l.strip_prefix(kw)?.trim_start();
    let rest = rest.strip_prefix('(')?;
    let end = rest.find(')')?;
    Some(rest[..end].trim().trim_matches('"').to_string())
}

impl Liberty {
    pub fn parse(text: &str) -> Liberty {
        let mut lib = Liberty::default();
        let mut cell: Option<String> = None;
        let mut pin: Option<String> = None;
        for raw in text.lines() {
            let l = raw.trim();
            if let Some(c) = group_name(l, "cell") {
                cell = Some(c);
                pin = None;
            } else if let Some(p) = group_name(l, "pin") {
                pin = Some(p);
            } else if let Some(c) = &cell {
                if let Some(v) = l.strip_prefix("area") {
                    let v = v
                        .trim_start_matches([' ', ':'])
                        .trim_end_matches(';')
                        .trim();
                    if let Ok(a) = v.parse::<f64>() {
                        lib.area.insert(c.clone(), a);
                    }
                } else if l.starts_with("direction") && l.contains("output") {
                    if let Some(p) = &pin {
                        lib.outputs.entry(c.clone()).or_default().push(p.clone());
                    }
                } else if (l.starts_with("ff ") || l.starts_with("ff(") || l.starts_with("latch"))
                    && !lib.sequential.contains(c)
                {
                    lib.sequential.push(c.clone());
                }
            }
        }
        lib
    }

    pub fn is_output(&self, cell: &str, pin: &str) -> bool {
        self.outputs
            .get(cell)
            .is_some_and(|o| o.iter().any(|p| p == pin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_areas_pins_and_flip_flops() {
        let text = r#"
library (x) {
  cell (NAND2X1) {
    area : 32;
    pin (A) {
      direction : input;
    }
    pin (Y) {
      direction : output;
    }
  }
  cell ("DFFPOSX1") {
    area : 192.5;
    ff (DS0000,P0000) { next_state : "D"; }
    pin (Q) {
      direction : output;
    }
  }
}"#;
        let l = Liberty::parse(text);
        assert_eq!(l.area["NAND2X1"], 32.0);
        assert_eq!(l.area["DFFPOSX1"], 192.5);
        assert!(l.is_output("NAND2X1", "Y") && !l.is_output("NAND2X1", "A"));
        assert_eq!(l.sequential, ["DFFPOSX1"]);
    }
}
