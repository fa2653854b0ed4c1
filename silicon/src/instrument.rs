//! The generated Verilog with its state brought out for the formal
//! wrapper: each memory's contents and write port and each register of
//! the top module become extra output ports `fv_<instance>` of `sbrp_pb`.
//! Outputs only: the behaviour is unchanged.

use std::fmt::Write as _;

use crate::error::{Result, SiliconError};

fn bad(msg: String) -> SiliconError {
    SiliconError::Instrument(msg)
}

/// Width and name of a `wire [hi:0] name;` (or `wire name;`) declaration.
fn wire_decl(line: &str) -> Option<(usize, String)> {
    let rest = line.trim().strip_prefix("wire ")?.trim();
    if rest.starts_with('[') {
        let close = rest.find(']')?;
        let hi: usize = rest[1..close]
            .split(':')
            .next()
            .and_then(|x| x.trim().parse().ok())
            .unwrap_or(0);
        Some((
            hi + 1,
            rest[close + 1..].trim().trim_end_matches(';').to_string(),
        ))
    } else {
        Some((1, rest.trim_end_matches(';').to_string()))
    }
}

/// Adds `fv_dump` = {we, wa, mem[D-1], ..., mem[0]} to memory module `m`
/// and connects it in the top module; returns the top port's width, or
/// `None` when the module holds no memory.
fn instrument_memory(out: &mut String, m: &str) -> Result<Option<usize>> {
    let start = out
        .find(&format!("module {m}("))
        .ok_or_else(|| bad(format!("module {m} not found")))?;
    let end = start
        + out[start..]
            .find("endmodule")
            .ok_or_else(|| bad(format!("end of module {m} not found")))?;
    let body = out[start..end].to_string();
    let Some(mline) = body
        .lines()
        .find(|l| l.trim_start().starts_with("reg [") && l.contains(" mem ["))
    else {
        return Ok(None);
    };
    let nums: Vec<usize> = mline
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .filter_map(|t| t.parse().ok())
        .collect();
    if nums.len() < 4 {
        return Err(bad(format!(
            "cannot read the memory declaration of {m}: {mline}"
        )));
    }
    let (bits, words) = (nums[0] + 1, nums[3] + 1);
    let aw = words.trailing_zeros() as usize;
    let width = bits * words + aw + 1;
    let decl = format!(
        "{mline}\n    output wire [{hi}:0] fv_dump;\n    genvar fv_g;\n    generate for (fv_g = 0; fv_g < {words}; fv_g = fv_g + 1) begin : fv_words\n        assign fv_dump[fv_g*{bits} +: {bits}] = mem[fv_g];\n    end endgenerate\n    assign fv_dump[{wa_lo} +: {aw}] = wa;\n    assign fv_dump[{we_bit}] = we;\n",
        hi = width - 1,
        wa_lo = bits * words,
        we_bit = bits * words + aw,
    );
    let nb =
        body.replacen("(clock,", "(fv_dump,clock,", 1)
            .replacen(&format!("{mline}\n"), &decl, 1);
    out.replace_range(start..end, &nb);
    let inst = m.trim_start_matches("sbrp_pb$");
    let pat = format!("{m} {inst}(\n");
    let p = out
        .find(&pat)
        .ok_or_else(|| bad(format!("instance {inst} of {m} not found in sbrp_pb")))?;
    out.insert_str(p + pat.len(), &format!("        .fv_dump(fv_{inst}),\n"));
    Ok(Some(width))
}

/// The Verilog of the unit with the memory contents and the state registers
/// brought out as extra output ports `fv_<instance>` of `sbrp_pb`.
pub fn instrument_for_formal(v: &str) -> Result<String> {
    let mut out = v.to_string();
    // (port, width, source net; empty for a memory, connected by instance)
    let mut top_ports: Vec<(String, usize, String)> = Vec::new();
    let mut mem_modules = Vec::new();
    for (pos, _) in v.match_indices("\nmodule sbrp_pb$m_") {
        let rest = &v[pos + 8..];
        mem_modules.push(rest.chars().take_while(|c| *c != '(').collect::<String>());
    }
    for m in &mem_modules {
        if let Some(width) = instrument_memory(&mut out, m)? {
            let inst = m.trim_start_matches("sbrp_pb$");
            top_ports.push((format!("fv_{inst}"), width, String::new()));
        }
    }
    // Registers: the `r_<name>$q` nets of the top module.
    let top_end = out
        .find("endmodule // sbrp_pb\n")
        .ok_or_else(|| bad("end of sbrp_pb not found".into()))?;
    for l in out[..top_end].lines() {
        if let Some((width, name)) = wire_decl(l) {
            if name.starts_with("r_") && name.ends_with("$q") {
                let port = format!("fv_{}", name.trim_end_matches("$q"));
                top_ports.push((port, width, name));
            }
        }
    }
    // Top ports: header, declarations, assigns.
    let hdr_start = out
        .find("module sbrp_pb(")
        .ok_or_else(|| bad("module sbrp_pb not found".into()))?;
    let hdr_end = hdr_start
        + out[hdr_start..]
            .find(");")
            .ok_or_else(|| bad("end of the port list of sbrp_pb not found".into()))?;
    let names: Vec<&str> = top_ports.iter().map(|p| p.0.as_str()).collect();
    out.insert_str(hdr_end, &format!(",{}", names.join(",")));
    let after = hdr_start
        + out[hdr_start..]
            .find(");\n")
            .ok_or_else(|| bad("end of the port list of sbrp_pb not found".into()))?
        + 3;
    let mut decls = String::new();
    for (port, width, src) in &top_ports {
        let _ = writeln!(decls, "    output wire [{}:0] {port};", width - 1);
        if !src.is_empty() {
            let _ = writeln!(decls, "    assign {port} = {src};");
        }
    }
    out.insert_str(after, &decls);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "
module sbrp_pb$m_type(clock,ra,rd,wa,wd,we);
    input wire clock;
    reg [1:0] mem [0:3];
endmodule // sbrp_pb$m_type

module sbrp_pb(clock,x);
    input wire clock;
    wire [3:0] r_actr$q;
    wire r_full$q;
    wire other;
    sbrp_pb$m_type m_type(
        .clock(clock)
    );
endmodule // sbrp_pb
";

    #[test]
    fn memories_and_registers_become_ports() {
        let out = instrument_for_formal(V).unwrap();
        // 4 words of 2 bits, 2 address bits, 1 write enable.
        assert!(out.contains("output wire [10:0] fv_dump;"), "{out}");
        assert!(out.contains(".fv_dump(fv_m_type),"), "{out}");
        assert!(
            out.contains("module sbrp_pb(clock,x,fv_m_type,fv_r_actr,fv_r_full);"),
            "{out}"
        );
        assert!(out.contains("output wire [3:0] fv_r_actr;\n    assign fv_r_actr = r_actr$q;"));
        assert!(out.contains("assign fv_r_full = r_full$q;"));
        assert!(!out.contains("fv_other"));
    }

    #[test]
    fn unexpected_verilog_is_an_error() {
        assert!(instrument_for_formal("module x(); endmodule").is_err());
        let e = instrument_for_formal(&V.replace("m_type m_type(", "m_type other(")).unwrap_err();
        assert!(e.to_string().contains("instance m_type"), "{e}");
    }
}
