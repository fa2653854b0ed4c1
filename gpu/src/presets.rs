//! Named presets: the configurations the paper evaluates (`docs/model.md`,
//! "Presets").
