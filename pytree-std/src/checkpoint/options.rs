//! The options of a load, [`Load`] (renames, partial loading, dtype
//! conversion, ties, the header limit): a plain value that the sources
//! (module `open`) keep in the [`Checkpoint`](super::Checkpoint) they open
//! and the loads (module `load`) read; and what a load did,
//! [`LoadReport`].

use std::collections::BTreeSet;

use pytree_core::{DType, Error};

use super::convert;
use super::format::DEFAULT_MAX_HEADER_BYTES;
use super::naming::Renames;

/// Options of loading: renames by prefix, partial loading, the header
/// limit: a plain value. Its sources ([`Load::open`], [`Load::from_bytes`],
/// [`Load::open_mapped`]) open a [`Checkpoint`](super::Checkpoint) that
/// keeps them for every load from it: by type, like a template, in place.
///
/// ```
/// use pytree_std::checkpoint::{Load, Save, Checkpoint};
/// // A file of a bigger model: `model.` before every name, and a head.
/// let full = (vec![1.0f32, 2.0], 9.0f32);
/// let bytes = Save::new().prefix("model.").to_bytes(&full)?;
/// // Its backbone, into a tree of our own: `model.0.0` is our `0`.
/// let mut backbone = (vec![0.0f32, 0.0],);
/// let file = Load::new().rename_prefix("model.0.", "0.").allow_unused().from_bytes(bytes)?;
/// let report = file.load_into(&mut backbone)?;
/// assert_eq!(backbone.0, [1.0, 2.0]);
/// assert_eq!(report.unused, ["model.1"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Load {
    pub(crate) renames: Renames,
    pub(crate) allow_missing: bool,
    pub(crate) allow_unused: bool,
    pub(crate) convert_floats: bool,
    /// The dtype floats are read as by type where the leaf type leaves
    /// the dtype open ([`Load::convert_floats_to`]).
    pub(crate) float_dtype: Option<DType>,
    pub(crate) shapes_from_file: bool,
    /// Loading by type reads the tensors' names even where the file holds
    /// a TreeDef ([`Load::by_names`]).
    pub(crate) by_names: bool,
    pub(crate) max_header_bytes: usize,
    /// (tied name, the name it is read from), the tree's names.
    pub(crate) ties: Vec<(String, String)>,
    /// The tree's names of the leaves stored transposed
    /// ([`Load::transpose`]).
    pub(crate) transposed: BTreeSet<String>,
}

impl Default for Load {
    fn default() -> Self {
        Load {
            renames: Renames::new(),
            allow_missing: false,
            allow_unused: false,
            convert_floats: false,
            float_dtype: None,
            shapes_from_file: false,
            by_names: false,
            ties: Vec::new(),
            transposed: BTreeSet::new(),
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
        }
    }
}

impl Load {
    /// Strict loading: every leaf must be in the file, every tensor of the
    /// file must be a leaf, with the same dtype and shape.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::Save::new().to_bytes(&(1.0f32, 2.0f32))?;
    /// let err = pytree_std::checkpoint::Load::new().from_bytes(bytes)?.load_like(&(0.0f32,)).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: tensor `1` (f32[]) of the file is not a leaf of the tree");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new() -> Self {
        Load::default()
    }

    /// Renames the file's tensors whose name begins with `from`: that
    /// prefix becomes `to` (`("model.", "")` reads `model.layers.0.w` as
    /// `layers.0.w`). A rule of [`Renames`]: rules chain, each applied
    /// to what the ones before it made. Two tensors renamed to one name
    /// are an error.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let bytes = Save::new().prefix("model.").to_bytes(&(1.0f32,))?;
    /// let file = Load::new().rename_prefix("model.", "").from_bytes(bytes)?;
    /// assert_eq!(file.load_like(&(0.0f32,))?.0, (1.0,));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn rename_prefix(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.renames = self.renames.prefix(from, to);
        self
    }

    /// Renames the file's tensors by `renames` (after the rules given so
    /// far): from the file's names to the tree's.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Renames, Save};
    /// use std::collections::BTreeMap;
    /// let hf = BTreeMap::from([("bert.encoder.layer.0.attention.self.query", 1.0f32)]);
    /// let bytes = Save::new().to_bytes(&hf)?;
    /// let ours = Renames::new().prefix("bert.", "").pattern("encoder.layer.*.attention.self", "layers.$1.attn");
    /// let file = Load::new().renames(ours).from_bytes(bytes)?;
    /// let like = BTreeMap::from([("layers.0.attn.query".to_string(), 0.0f32)]);
    /// assert_eq!(file.load_like(&like)?.0["layers.0.attn.query"], 1.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn renames(mut self, renames: Renames) -> Self {
        self.renames = self.renames.then(renames);
        self
    }

    /// Converts floats on load: a tensor of another float dtype (`f16`,
    /// `bf16`, `f32`, `f64`) than the leaf's float dtype is converted to
    /// it (rounded to nearest, ties to even; PyTorch's `.to(dtype)`).
    /// Integers and bools are never converted, nor a float into an
    /// integer leaf or back: those stay errors.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let bytes = Save::new().to_bytes(&(1.5f64, 0.25f64))?;
    /// assert!(Load::new().from_bytes(bytes.clone())?.load_like(&(0.0f32, 0.0f32)).is_err());
    /// let file = Load::new().convert_floats().from_bytes(bytes)?;
    /// assert_eq!(file.load_like(&(0.0f32, 0.0f32))?.0, (1.5, 0.25));
    /// let ints = Load::new().convert_floats().from_bytes(Save::new().to_bytes(&(7i64,))?)?;
    /// assert!(ints.load_like(&(0.0f64,)).is_err()); // an integer into a float: never
    /// assert!(ints.load_like(&(0i32,)).is_err()); // i64 into i32: never
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn convert_floats(mut self) -> Self {
        self.convert_floats = true;
        self
    }

    /// [`convert_floats`](Load::convert_floats), and a target for the
    /// leaves whose type leaves the dtype open ([`AnyArray`](crate::AnyArray),
    /// candle's `Tensor` and `Var`): loaded by type, every float tensor
    /// (`f16`, `bf16`, `f32`, `f64`) is read into such a leaf as `dtype`
    /// (transformers' `from_pretrained(dtype=...)`, the dtype of candle's
    /// `VarBuilder`). A leaf type of fixed dtype (`ArrayD<f32>`), or a
    /// template's leaf, keeps converting to its own dtype; integers and
    /// bools stay as they are. `dtype` must be a float dtype (else opening
    /// a file is an error).
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// use pytree_std::{AnyArray, DType};
    /// use pytree_std::ndarray::{array, Array1};
    /// let bytes = Save::new().to_bytes(&(AnyArray::from(array![1.5f64]), AnyArray::from(array![7i64])))?;
    /// let file = Load::new().convert_floats_to(DType::F32).from_bytes(bytes)?;
    /// let (w, ids): (AnyArray, AnyArray) = file.load()?.0;
    /// assert_eq!((w.dtype(), ids.dtype()), (DType::F32, DType::I64));
    /// assert_eq!(Array1::<f32>::try_from(w)?, array![1.5f32]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    ///
    /// A typed model of `#[pytree(leaf_type = AnyArray)]` (f32 weights
    /// beside an i64 buffer) has `AnyArray` leaves too, so a 16-bit file
    /// loads into it by type with this target: [`convert_floats`](Load::convert_floats)
    /// alone reads each float as the file's dtype, and the `f32` field then
    /// refuses it, naming its path.
    ///
    /// ```
    /// use pytree_std::checkpoint::Load;
    /// use pytree_std::ndarray::{array, Array1};
    /// use pytree_std::{half::f16, AnyArray, DType, PyTree};
    ///
    /// #[derive(PyTree, Debug)]
    /// #[pytree(leaf_type = AnyArray)]
    /// struct Embeddings { weight: Array1<f32>, position_ids: Array1<i64> }
    ///
    /// // A 16-bit file as Python's `safetensors` writes it (no TreeDef).
    /// let header = br#"{"position_ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},"weight":{"dtype":"F16","shape":[1],"data_offsets":[16,18]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend(0i64.to_le_bytes().into_iter().chain(1i64.to_le_bytes()));
    /// bytes.extend(f16::from_f32(0.5).to_le_bytes());
    /// let err = Load::new().convert_floats().from_bytes(bytes.clone())?.load::<Embeddings>().unwrap_err();
    /// assert!(err.to_string().contains(".weight"), "{err}");
    /// let e: Embeddings = Load::new().convert_floats_to(DType::F32).from_bytes(bytes)?.load()?.0;
    /// assert_eq!((e.weight, e.position_ids), (array![0.5f32], array![0i64, 1]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn convert_floats_to(mut self, dtype: DType) -> Self {
        self.convert_floats = true;
        self.float_dtype = Some(dtype);
        self
    }

    /// The options' own errors, before a file is read: the renames', and a
    /// target of [`convert_floats_to`](Load::convert_floats_to) that is not
    /// a float dtype.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        self.renames.validate()?;
        match self.float_dtype {
            Some(d) if !convert::is_float(d) => Err(Error::custom(format!(
                "Load::convert_floats_to({d}): floats are converted to f16, bf16, f32 or f64 only"
            ))),
            _ => Ok(()),
        }
    }

    /// Leaves that the file lacks are not an error: [`load_into`](super::Checkpoint::load_into)
    /// leaves them as they are, [`load_like`](super::Checkpoint::load_like) copies the
    /// template's. Loading by type alone still needs every leaf.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let file = Load::new().allow_missing().from_bytes(Save::new().to_bytes(&(1.0f32,))?)?;
    /// assert_eq!(file.load_like(&(0.0f32, 5.0f32))?.0, (1.0, 5.0));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn allow_missing(mut self) -> Self {
        self.allow_missing = true;
        self
    }

    /// Tensors of the file that no leaf asks for are skipped instead of an
    /// error (and listed in [`LoadReport::unused`]).
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let file = Load::new().allow_unused().from_bytes(Save::new().to_bytes(&(1.0f32, 2.0f32))?)?;
    /// assert_eq!(file.load_like(&(0.0f32,))?.0, (1.0,));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn allow_unused(mut self) -> Self {
        self.allow_unused = true;
        self
    }

    /// Both of the above: PyTorch's `strict=False`. What was left out is
    /// in the [`LoadReport`] that every load returns (check
    /// [`LoadReport::is_complete`]).
    ///
    /// ```
    /// let o = pytree_std::checkpoint::Load::new().non_strict();
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn non_strict(self) -> Self {
        self.allow_missing().allow_unused()
    }

    /// Reads the leaf `name` from the tensor `to` when the file has no
    /// tensor `name` (names as the tree has them, after the renames): a
    /// weight written once for two fields (tied embeddings, see
    /// [`Save::tie`](super::Save::tie); transformers leaves a tied
    /// `lm_head` or `cls.predictions.decoder.weight` out of its files) is
    /// tied again on load. Every load honours it alike: by type (with the
    /// file's TreeDef, or by names from a file without one), against a
    /// template, in place. The [`LoadReport`] lists it as loaded.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// use std::collections::BTreeMap;
    /// let file = Save::new().to_bytes(&BTreeMap::from([("embed".to_string(), 1.5f32)]))?;
    /// let like = BTreeMap::from([("embed".to_string(), 0.0f32), ("head".to_string(), 0.0)]);
    /// assert!(Load::new().from_bytes(file.clone())?.load_like(&like).is_err());
    /// let both = Load::new().tie("head", "embed").from_bytes(file)?.load_like(&like)?.0;
    /// assert_eq!(both["head"], 1.5);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn tie(mut self, name: impl Into<String>, to: impl Into<String>) -> Self {
        self.ties.push((name.into(), to.into()));
        self
    }

    /// The leaves `names` (the tree's names, after the renames, as
    /// [`tie`](Load::tie) takes them) are stored transposed: each is read
    /// from a 2-d tensor of the file whose shape is the transpose of the
    /// leaf's, `[a, b]` into `[b, a]`, its elements transposed. The rule
    /// is by name, never by shape, since a square matrix fits both ways
    /// (PyTorch's `nn.Linear` keeps its weight as `[d_out, d_in]`, burn's
    /// `Linear` as `[d_in, d_out]`, and BERT's attention weights are
    /// square): every leaf named is transposed, and a tensor of any other
    /// shape, the leaf's own shape included (a file already in the
    /// tree's layout), is an error naming the leaf's path, what was
    /// expected and what was found. A square leaf fits both layouts, so
    /// its file is taken to be in the layout the rule names: the rule is
    /// the check there. A name that is no leaf of the tree is an error
    /// too. Every load honours it alike
    /// (by type the tensor must be 2-d, its shape is the file's
    /// transposed), after a float conversion, and a tied leaf is read
    /// transposed from the tensor it is tied to. Save such a tree back
    /// with the same names in [`Save::transpose`](super::Save::transpose).
    /// For a burn module, `Load::transpose_linear` (feature `burn`) names the weights of
    /// its `Linear` layers.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// use pytree_std::ndarray::{array, Array2};
    /// use std::collections::BTreeMap;
    /// // PyTorch's layout, [d_out, d_in] = [3, 2]...
    /// let torch = BTreeMap::from([("fc.weight", array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]])]);
    /// let bytes = Save::new().to_bytes(&torch)?;
    /// // ... into a model that keeps [d_in, d_out] = [2, 3].
    /// let like = BTreeMap::from([("fc.weight".to_string(), Array2::<f32>::zeros((2, 3)))]);
    /// let err = Load::new().from_bytes(bytes.clone())?.load_like(&like).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["fc.weight"]: tensor `fc.weight`: expected f32[2,3], found f32[3,2]"#);
    /// let file = Load::new().transpose(["fc.weight"]).from_bytes(bytes)?;
    /// let ours = file.load_like(&like)?.0;
    /// assert_eq!(ours["fc.weight"], array![[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]);
    /// // Strict: a file already in the model's layout is not guessed at.
    /// let err = file.load_like(&BTreeMap::from([("fc.weight".to_string(), Array2::<f32>::zeros((3, 2)))])).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["fc.weight"]: tensor `fc.weight`: expected f32[2,3] (the leaf's f32[3,2] transposed: Load::transpose), found f32[3,2]"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn transpose<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.transposed.extend(names.into_iter().map(Into::into));
        self
    }

    /// [`load_like`](super::Checkpoint::load_like) takes each leaf's shape from the
    /// file: the template fixes the structure (the fields, the number of
    /// layers) and the dtypes, and its arrays may be of any size (empty
    /// ones, say), so a model is loaded without its config. The rank of a
    /// fixed-rank field (`Array2`) is still checked, at its path.
    /// [`load_into`](super::Checkpoint::load_into) keeps its arrays and their shapes.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// use pytree_std::ndarray::{array, Array1, Array2};
    /// let bytes = Save::new().to_bytes(&(array![[1.0f32, 2.0]], array![3.0f32]))?;
    /// let like = (Array2::<f32>::zeros((0, 0)), Array1::<f32>::zeros(0));
    /// let (w, b) = Load::new().shapes_from_file().from_bytes(bytes)?.load_like(&like)?.0;
    /// assert_eq!((w, b), (array![[1.0, 2.0]], array![3.0]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn shapes_from_file(mut self) -> Self {
        self.shapes_from_file = true;
        self
    }

    /// [`load`](super::Checkpoint::load) by type reads the structure from
    /// the tensors' names, as it does for a file without a TreeDef, even
    /// where the file holds one (a TreeDef that does not describe the type,
    /// or that does not read): the type fixes the structure, the names
    /// each `Vec`'s length and each `Option`.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let bytes = Save::new().to_bytes(&vec![1.0f32, 2.0])?;
    /// // The file's TreeDef is a `Vec`, the type a pair: by names, it loads.
    /// assert!(Load::new().from_bytes(bytes.clone())?.load::<(f32, f32)>().is_err());
    /// let (pair, report) = Load::new().by_names().from_bytes(bytes)?.load::<(f32, f32)>()?;
    /// assert_eq!((pair, report.is_complete()), ((1.0, 2.0), true));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn by_names(mut self) -> Self {
        self.by_names = true;
        self
    }

    /// The largest header to read (default [`DEFAULT_MAX_HEADER_BYTES`],
    /// the format's 100 MB). Reading a header costs memory proportional to
    /// its size; a longer one is an error before anything is allocated.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let bytes = Save::new().to_bytes(&(1.0f32,))?;
    /// let err = Load::new().max_header_bytes(16).from_bytes(bytes).unwrap_err();
    /// assert!(err.to_string().contains("over the limit of 16"));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn max_header_bytes(mut self, limit: usize) -> Self {
        self.max_header_bytes = limit;
        self
    }
}

/// What a load did, by tensor name (PyTorch's `load_state_dict` result).
///
/// ```
/// let bytes = pytree_std::checkpoint::Save::new().to_bytes(&(1u8, 2u8))?;
/// let file = pytree_std::checkpoint::Load::new().non_strict().from_bytes(bytes)?;
/// let mut t = (0u8,);
/// let report = file.load_into(&mut t)?;
/// assert_eq!((report.loaded, report.missing, report.unused), (vec!["0".to_string()], vec![], vec!["1".to_string()]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// The leaves loaded, by name (after renaming), in leaf order.
    pub loaded: Vec<String>,
    /// The leaves the file lacks (allowed by [`Load::allow_missing`]), in
    /// leaf order.
    pub missing: Vec<String>,
    /// The file's tensors that no leaf asked for (allowed by
    /// [`Load::allow_unused`]), by their names in the file, in file order.
    pub unused: Vec<String>,
}

impl LoadReport {
    /// True when every leaf was loaded and every tensor used: what a
    /// strict load guarantees.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let file = Load::new().non_strict().from_bytes(Save::new().to_bytes(&(1u8,))?)?;
    /// assert!(file.load_into(&mut (0u8,))?.is_complete());
    /// assert!(!file.load_into(&mut (0u8, 0u8))?.is_complete());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty() && self.unused.is_empty()
    }
}
