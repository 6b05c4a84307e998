//! What the tests of transformers' BERT checkpoints share (each includes
//! this module with `mod hf;`): the fixtures' folder and the weights
//! `BertForMaskedLM` ties.

// Each test file uses a part of this module.
#![allow(dead_code)]

use std::path::PathBuf;

use pytree_std::checkpoint::Load;

/// `tests/fixtures/hf/`, made by its `make_fixtures.py`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/hf")
}

pub const DECODER_WEIGHT: &str = "cls.predictions.decoder.weight";
pub const WORD_EMBEDDINGS: &str = "bert.embeddings.word_embeddings.weight";
pub const DECODER_BIAS: &str = "cls.predictions.decoder.bias";
pub const CLS_BIAS: &str = "cls.predictions.bias";

/// The model's ties, as transformers' `_tied_weights_keys` lists them.
pub fn tied() -> Load {
    Load::new()
        .tie(DECODER_WEIGHT, WORD_EMBEDDINGS)
        .tie(DECODER_BIAS, CLS_BIAS)
}
