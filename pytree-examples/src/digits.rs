//! The UCI handwritten digits (1797 images of 8x8 pixels, 0..16 each, and
//! their digit), shipped in `data/digits.csv.gz` (scikit-learn's copy; see
//! `data/README.md` for its source and licence), split deterministically
//! into a training and a test set.

use std::fmt;
use std::io::Read;

use pytree_std::ndarray::{Array2, Axis};

/// The data set as shipped (gzip-compressed CSV), built into the binary.
///
/// ```
/// assert_eq!(&pytree_examples::digits::DIGITS_CSV_GZ[..2], [0x1f, 0x8b]); // gzip
/// ```
pub const DIGITS_CSV_GZ: &[u8] = include_bytes!("../data/digits.csv.gz");

/// Pixels per image (8x8).
///
/// ```
/// assert_eq!(pytree_examples::digits::PIXELS, 8 * 8);
/// ```
pub const PIXELS: usize = 64;
/// Classes (the digits 0..9).
///
/// ```
/// assert_eq!(pytree_examples::digits::CLASSES, 10);
/// ```
pub const CLASSES: usize = 10;

/// Why the data could not be read: the line and what was wrong.
///
/// ```
/// let err = pytree_examples::digits::Digits::from_csv("x").unwrap_err();
/// assert_eq!(err.to_string(), "line 1: 1 fields, expected 65 (64 pixels and a label)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError(pub String);

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DataError {}

/// Images (one row each, pixels scaled to 0..1) and their labels.
///
/// ```
/// let d = pytree_examples::digits::Digits::bundled()?;
/// assert_eq!((d.images.nrows(), d.labels.len()), (1797, 1797));
/// # Ok::<(), pytree_examples::digits::DataError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Digits {
    /// `n x 64`, pixel values divided by 16.
    pub images: Array2<f32>,
    /// The digit of each image, `0..10`.
    pub labels: Vec<usize>,
}

impl Digits {
    /// The data set shipped with this crate.
    ///
    /// ```
    /// let d = pytree_examples::digits::Digits::bundled()?;
    /// assert_eq!((d.len(), d.images.ncols()), (1797, 64));
    /// # Ok::<(), pytree_examples::digits::DataError>(())
    /// ```
    pub fn bundled() -> Result<Digits, DataError> {
        let mut csv = String::new();
        flate2::read::GzDecoder::new(DIGITS_CSV_GZ)
            .read_to_string(&mut csv)
            .map_err(|e| DataError(format!("digits.csv.gz: {e}")))?;
        Digits::from_csv(&csv)
    }

    /// Reads rows of 64 pixel values (0..16) and a label (0..9), comma
    /// separated; every malformed row is an error naming its line.
    ///
    /// ```
    /// use pytree_examples::digits::Digits;
    /// let row = format!("{}16,3\n", "0,".repeat(63));
    /// let d = Digits::from_csv(&row)?;
    /// assert_eq!((d.labels[0], d.images[[0, 63]]), (3, 1.0));
    /// assert!(Digits::from_csv("1,2\n").unwrap_err().0.contains("line 1"));
    /// # Ok::<(), pytree_examples::digits::DataError>(())
    /// ```
    pub fn from_csv(csv: &str) -> Result<Digits, DataError> {
        let mut pixels = Vec::new();
        let mut labels = Vec::new();
        for (i, line) in csv
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let fields: Vec<&str> = line.trim().split(',').collect();
            if fields.len() != PIXELS + 1 {
                return Err(DataError(format!(
                    "line {}: {} fields, expected {} (64 pixels and a label)",
                    i + 1,
                    fields.len(),
                    PIXELS + 1
                )));
            }
            let number = |s: &str, max: f64| -> Result<f64, DataError> {
                let v: f64 = s
                    .trim()
                    .parse()
                    .map_err(|_| DataError(format!("line {}: `{s}` is not a number", i + 1)))?;
                if !(0.0..=max).contains(&v) || v.fract() != 0.0 {
                    return Err(DataError(format!(
                        "line {}: {v} is not an integer in 0..={max}",
                        i + 1
                    )));
                }
                Ok(v)
            };
            for f in &fields[..PIXELS] {
                pixels.push((number(f, 16.0)? / 16.0) as f32);
            }
            labels.push(number(fields[PIXELS], (CLASSES - 1) as f64)? as usize);
        }
        let images = Array2::from_shape_vec((labels.len(), PIXELS), pixels)
            .map_err(|e| DataError(format!("images: {e}")))?;
        Ok(Digits { images, labels })
    }

    /// The number of images.
    ///
    /// ```
    /// assert_eq!(pytree_examples::digits::Digits::from_csv("")?.len(), 0);
    /// # Ok::<(), pytree_examples::digits::DataError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there are no images.
    ///
    /// ```
    /// assert!(pytree_examples::digits::Digits::from_csv("")?.is_empty());
    /// # Ok::<(), pytree_examples::digits::DataError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The images at `rows`, in that order.
    ///
    /// ```
    /// let d = pytree_examples::digits::Digits::bundled()?;
    /// let b = d.select(&[3, 0]);
    /// assert_eq!((b.len(), b.labels[1]), (2, d.labels[0]));
    /// # Ok::<(), pytree_examples::digits::DataError>(())
    /// ```
    pub fn select(&self, rows: &[usize]) -> Digits {
        Digits {
            images: self.images.select(Axis(0), rows),
            labels: rows.iter().map(|&r| self.labels[r]).collect(),
        }
    }

    /// A deterministic split: the images shuffled by `seed`, the first
    /// `test_fraction` of them the test set, the rest the training set.
    ///
    /// ```
    /// let d = pytree_examples::digits::Digits::bundled()?;
    /// let (train, test) = d.split(0.2, 0);
    /// assert_eq!((train.len(), test.len()), (1438, 359));
    /// assert_eq!(d.split(0.2, 0).1, test); // the same every time
    /// # Ok::<(), pytree_examples::digits::DataError>(())
    /// ```
    pub fn split(&self, test_fraction: f64, seed: u64) -> (Digits, Digits) {
        let mut order: Vec<usize> = (0..self.len()).collect();
        Rng::new(seed).shuffle(&mut order);
        let n_test = ((self.len() as f64) * test_fraction.clamp(0.0, 1.0)).floor() as usize;
        let (test, train) = order.split_at(n_test);
        (self.select(train), self.select(test))
    }
}

/// A small deterministic random number generator (SplitMix64), so that
/// the split, the initialization and the batches are the same on every
/// machine.
///
/// ```
/// let mut r = pytree_examples::digits::Rng::new(1);
/// let a = r.next_u64();
/// assert_ne!(a, r.next_u64());
/// assert!((0.0..1.0).contains(&r.uniform()));
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    ///
    /// ```
    /// use pytree_examples::digits::Rng;
    /// assert_eq!(Rng::new(7).next_u64(), Rng::new(7).next_u64());
    /// ```
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let _ = pytree_examples::digits::Rng::new(0).next_u64();
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    ///
    /// ```
    /// assert!(pytree_examples::digits::Rng::new(3).uniform() < 1.0);
    /// ```
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    ///
    /// ```
    /// let mut r = pytree_examples::digits::Rng::new(3);
    /// let mean = (0..10_000).map(|_| r.normal()).sum::<f64>() / 10_000.0;
    /// assert!(mean.abs() < 0.05);
    /// ```
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Shuffles `items` in place (Fisher-Yates).
    ///
    /// ```
    /// let mut v: Vec<u32> = (0..10).collect();
    /// pytree_examples::digits::Rng::new(1).shuffle(&mut v);
    /// v.sort();
    /// assert_eq!(v, (0..10).collect::<Vec<_>>());
    /// ```
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}
