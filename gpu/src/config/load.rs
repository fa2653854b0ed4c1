//! Loading the GPU configuration (`docs/model-params.md`): TOML files and
//! `--set key=value` through a TOML round trip, refusing unknown keys and
//! ill-typed values with file:line and the nearest key (split from
//! `config/mod.rs`, the schema).

use std::path::Path;

use super::{ConfigError, GpuConfig, Suggest};

impl GpuConfig {
    /// Parses a TOML text; absent keys keep their defaults. `file_name` only
    /// labels errors. Does not call [`validate`](Self::validate): `--set`
    /// may still change the result.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<GpuConfig, ConfigError> {
        toml::from_str(text).map_err(|e| file_error(text, file_name, &e))
    }

    /// Reads and parses a TOML file (see [`from_toml_str`](Self::from_toml_str)).
    pub fn load(path: impl AsRef<Path>) -> Result<GpuConfig, ConfigError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: name.clone(),
            source,
        })?;
        Self::from_toml_str(&text, &name)
    }

    /// The whole configuration as TOML (loads back to an equal config).
    pub fn to_toml_string(&self) -> String {
        // The schema has only tables, numbers, booleans and strings, which
        // TOML always represents; the fallback is never expected.
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot serialize: {e}\n"))
    }

    /// Every leaf key, dotted (`pm.write_bandwidth`), in sorted order.
    pub fn keys() -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(toml::Value::Table(t)) = toml::Value::try_from(GpuConfig::default()) {
            collect_keys(&t, "", &mut out);
        }
        out
    }

    /// Applies one `key=value` argument (see [`set`](Self::set)).
    pub fn set_arg(&mut self, arg: &str) -> Result<(), ConfigError> {
        match arg.split_once('=') {
            Some((k, v)) => self.set(k.trim(), v.trim()),
            None => Err(ConfigError::SetSyntax(arg.to_string())),
        }
    }

    /// Sets one dotted key (`pb.window`, `model`, `artifact.ack_at_l2`) from
    /// text, parsed as the type the key already has: integers and numbers
    /// in TOML syntax, `true`/`false`, and names (`epoch`, `far`) without
    /// quotes. Leaves `self` unchanged on error. Does not validate.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad = |message: String| ConfigError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            message,
        };
        let mut root = toml::Value::try_from(&*self)
            .map_err(|e| bad(format!("cannot serialize the configuration: {e}")))?;
        let unknown = || ConfigError::UnknownKey {
            key: key.to_string(),
            suggestion: nearest(key, &GpuConfig::keys()),
        };
        let mut slot = &mut root;
        for seg in key.split('.') {
            slot = match slot {
                toml::Value::Table(t) => t.get_mut(seg).ok_or_else(unknown)?,
                _ => return Err(unknown()),
            };
        }
        let new = match slot {
            toml::Value::Integer(_) => {
                let v = value.replace('_', "");
                v.parse::<i64>()
                    .map(toml::Value::Integer)
                    .map_err(|_| bad("expected an integer".into()))?
            }
            toml::Value::Float(_) => {
                let v = value.replace('_', "");
                v.parse::<f64>()
                    .map(toml::Value::Float)
                    .map_err(|_| bad("expected a number".into()))?
            }
            toml::Value::Boolean(_) => match value {
                "true" => toml::Value::Boolean(true),
                "false" => toml::Value::Boolean(false),
                _ => return Err(bad("expected true or false".into())),
            },
            toml::Value::String(_) => toml::Value::String(unquote(value).to_string()),
            toml::Value::Table(t) => {
                let mut sub = Vec::new();
                collect_keys(t, &format!("{key}."), &mut sub);
                return Err(bad(format!(
                    "`{key}` is a table; set one of its keys: {}",
                    sub.join(", ")
                )));
            }
            other => return Err(bad(format!("cannot set a {}", other.type_str()))),
        };
        *slot = new;
        // Only `key` changed, so any error is about it (an enum name or an
        // integer out of range).
        let cfg: GpuConfig = root
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.message().trim().replace('\n', "; ")))?;
        *self = cfg;
        Ok(())
    }
}

/// The 1-based line of a TOML text that sets dotted `key` (`pm.latency`:
/// `latency = ..` under `[pm]`, or `pm.latency = ..`), if one does.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if let Some(h) = l.strip_prefix('[') {
            table = norm_key(h.split(']').next().unwrap_or("").trim());
            continue;
        }
        let Some((k, _)) = l.split_once('=') else {
            continue;
        };
        let k = norm_key(k.trim());
        let full = if table.is_empty() {
            k
        } else {
            format!("{table}.{k}")
        };
        if full == key {
            return Some(i + 1);
        }
    }
    None
}

fn collect_keys(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        match v {
            toml::Value::Table(sub) => collect_keys(sub, &format!("{prefix}{k}."), out),
            _ => out.push(format!("{prefix}{k}")),
        }
    }
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// The candidate closest to `key`, if close enough to be a likely typo: a
/// key whose last part is `key` (`window` -> `pb.window`), else the one at
/// the smallest edit distance, within a third of the key's length (min 2).
pub(crate) fn nearest(key: &str, candidates: &[String]) -> Option<String> {
    let tail: Vec<&String> = candidates
        .iter()
        .filter(|c| c.rsplit('.').next() == Some(key))
        .collect();
    if tail.len() == 1 {
        return Some(tail[0].clone());
    }
    let best = candidates
        .iter()
        .map(|c| (edit_distance(key, c), c))
        .min_by_key(|(d, _)| *d)?;
    (best.0 <= (key.len() / 3).max(2)).then(|| best.1.clone())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Turns a toml error into file:line with the dotted key where the text at
/// the error's position shows it.
fn file_error(text: &str, file: &str, e: &toml::de::Error) -> ConfigError {
    let msg = e.message().trim().replace('\n', "; ");
    let Some(span) = e.span() else {
        return ConfigError::File {
            file: file.to_string(),
            line: 0,
            key: None,
            message: msg,
        };
    };
    let start = span.start.min(text.len());
    let end = span.end.clamp(start, text.len());
    let line = text[..start].matches('\n').count() + 1;
    // serde's message for an unknown key points at the key itself.
    let is_key = msg.starts_with("unknown field");
    let key = key_at(text, start, &text[start..end], is_key);
    let message = match (&key, is_key) {
        (Some(k), true) => {
            let known = GpuConfig::keys();
            format!("unknown key `{k}`{}", Suggest(&nearest(k, &known)))
        }
        (Some(k), false) => format!("`{k}`: {msg}"),
        (None, _) => msg,
    };
    ConfigError::File {
        file: file.to_string(),
        line,
        key,
        message,
    }
}

/// Rebuilds the dotted key at byte `at` of `text` lexically: the last
/// `[table]` header above plus the key (and any inline tables) on the line.
/// Only as exact as the schema needs (no arrays of tables or multi-line
/// values exist in it).
fn key_at(text: &str, at: usize, span_text: &str, is_key: bool) -> Option<String> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    // The error is in a `[table]` header: the header is the key.
    let before = text[line_start..at].trim_start();
    if let Some(h) = before.strip_prefix('[') {
        let k = if is_key {
            norm_key(&format!("{h}{span_text}"))
        } else {
            let line = text[line_start..].lines().next().unwrap_or("");
            norm_key(line.trim().trim_start_matches('[').split(']').next()?)
        };
        return (!k.is_empty()).then_some(k);
    }
    let header = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .and_then(|l| l.trim_start_matches('[').split(']').next())
        .map(norm_key)
        .unwrap_or_default();
    let (mut stack, mut cur, mut last) = (Vec::new(), String::new(), None);
    let (mut after_eq, mut quote) = (false, None);
    for c in text[line_start..at].chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            if !after_eq {
                cur.push(c);
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                if !after_eq {
                    cur.push(c);
                }
            }
            '=' => {
                last = Some(norm_key(&cur));
                cur.clear();
                after_eq = true;
            }
            '{' => {
                if let (true, Some(k)) = (after_eq, last.take()) {
                    stack.push(k);
                }
                after_eq = false;
                cur.clear();
            }
            '}' | ',' => {
                if c == '}' {
                    stack.pop();
                }
                after_eq = false;
                cur.clear();
                last = None;
            }
            _ if !after_eq => cur.push(c),
            _ => {}
        }
    }
    let leaf = if is_key {
        norm_key(&format!("{cur}{span_text}"))
    } else {
        last?
    };
    let mut parts: Vec<String> = Vec::new();
    if !header.is_empty() {
        parts.push(header);
    }
    parts.extend(stack);
    if leaf.is_empty() {
        return None;
    }
    parts.push(leaf);
    Some(parts.join("."))
}

/// `pm . "latency"` -> `pm.latency`.
fn norm_key(k: &str) -> String {
    k.split('.').map(unquote).collect::<Vec<_>>().join(".")
}
