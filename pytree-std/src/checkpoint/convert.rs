//! dtype conversion on load ([`Load::convert_floats`](super::Load::convert_floats)):
//! a tensor of one float dtype read into a leaf of another, rounded to
//! nearest (ties to even), as PyTorch's `.to(dtype)` does. Integers and
//! bools are never converted. And the one layout conversion, a matrix
//! transposed ([`Load::transpose`](super::Load::transpose),
//! [`Save::transpose`](super::Save::transpose)).

use pytree_core::{DType, Error};

use super::leaf::TensorView;

/// True for the float dtypes conversion handles.
pub(crate) fn is_float(d: DType) -> bool {
    matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
}

/// True when a tensor of dtype `found` may be converted to `wanted`.
pub(crate) fn convertible(found: DType, wanted: DType) -> bool {
    found != wanted && is_float(found) && is_float(wanted)
}

/// The tensor's data as `to` (little-endian, C order), or `None` when no
/// conversion is needed or possible (same dtype, or not two floats).
/// Every source value is exact as an `f64`, and each target rounds once
/// from it. An error only when the data cannot be read (a file truncated
/// since it was opened).
pub(crate) fn floats(view: &TensorView<'_>, to: DType) -> Result<Option<Vec<u8>>, Error> {
    let (Some(src), Some(dst)) = (view.dtype.size_in_bytes(), to.size_in_bytes()) else {
        return Ok(None);
    };
    if !convertible(view.dtype, to) {
        return Ok(None);
    }
    let data = view.data()?;
    let mut out = Vec::with_capacity(data.len() / src * dst);
    for chunk in data.chunks_exact(src) {
        let mut b = [0u8; 8];
        b[..src].copy_from_slice(chunk);
        let x = match view.dtype {
            DType::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::BF16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => f64::from_le_bytes(b),
        };
        match to {
            DType::F16 => out.extend_from_slice(&half::f16::from_f64(x).to_le_bytes()),
            DType::BF16 => out.extend_from_slice(&half::bf16::from_f64(x).to_le_bytes()),
            // `as` rounds an f64 to the nearest f32, ties to even.
            DType::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
            _ => out.extend_from_slice(&x.to_le_bytes()),
        }
    }
    Ok(Some(out))
}

/// The elements of a `[rows, cols]` matrix in C order (`width` bytes
/// each) as its transpose `[cols, rows]` in C order
/// ([`Load::transpose`](super::Load::transpose),
/// [`Save::transpose`](super::Save::transpose)).
pub(crate) fn transpose_2d(data: &[u8], width: usize, rows: usize, cols: usize) -> Vec<u8> {
    let mut out = vec![0u8; data.len()];
    if width == 0 || rows == 0 || cols == 0 {
        return out;
    }
    for (r, row) in data.chunks_exact(cols * width).enumerate().take(rows) {
        for (c, element) in row.chunks_exact(width).enumerate() {
            let at = (c * rows + r) * width;
            out[at..at + width].copy_from_slice(element);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::storage::TensorData;
    use super::{DType, TensorView};

    fn view(dtype: DType, data: &[u8]) -> TensorView<'_> {
        TensorView {
            name: "t",
            dtype,
            shape: &[],
            data: TensorData::Memory(data),
        }
    }

    fn floats(view: &TensorView<'_>, to: DType) -> Option<Vec<u8>> {
        super::floats(view, to).unwrap()
    }

    #[test]
    fn halves_widen_exactly_and_narrowing_rounds_to_nearest_even() {
        // f16 0x3c01 = 1 + 2^-10, exact in f32.
        let out = floats(&view(DType::F16, &[0x01, 0x3c]), DType::F32).unwrap();
        assert_eq!(
            f32::from_le_bytes(out.try_into().unwrap()),
            1.0 + 2f32.powi(-10)
        );
        // 1 + 2^-11 is halfway between two f16 values: ties to even, 1.0.
        let x = (1.0f32 + 2f32.powi(-11)).to_le_bytes();
        assert_eq!(
            floats(&view(DType::F32, &x), DType::F16).unwrap(),
            [0x00, 0x3c]
        );
        let bf = floats(&view(DType::F64, &1.0f64.to_le_bytes()), DType::BF16).unwrap();
        assert_eq!(bf, [0x80, 0x3f]);
    }

    #[test]
    fn a_transpose_moves_whole_elements() {
        // [[1, 2, 3], [4, 5, 6]] as u16 -> [[1, 4], [2, 5], [3, 6]].
        let m: Vec<u8> = (1u16..=6).flat_map(u16::to_le_bytes).collect();
        let t = super::transpose_2d(&m, 2, 2, 3);
        let back: Vec<u16> = t
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(back, [1, 4, 2, 5, 3, 6]);
        assert_eq!(super::transpose_2d(&t, 2, 3, 2), m);
        assert!(super::transpose_2d(&[], 4, 0, 5).is_empty());
    }

    #[test]
    fn integers_bools_and_same_dtypes_are_not_converted() {
        assert!(floats(&view(DType::I64, &[0; 8]), DType::F32).is_none());
        assert!(floats(&view(DType::F32, &[0; 4]), DType::I32).is_none());
        assert!(floats(&view(DType::Bool, &[1]), DType::F16).is_none());
        assert!(floats(&view(DType::F32, &[0; 4]), DType::F32).is_none());
    }
}
