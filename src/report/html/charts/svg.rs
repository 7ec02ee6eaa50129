//! The little SVG the plots share: the opening tag, the palette, tick steps.

/// Line colours of the busbw plot's series, in order.
pub(super) const PALETTE: [&str; 10] = [
    "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#bf3989", "#4d2d00",
    "#6e7781", "#9a6700",
];

/// A "nice" step for about `n` ticks over 0..max.
pub(super) fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(1e-12);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nf = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * mag
}

/// The opening `<svg>` tag of a plot `w` × `h` (viewBox units) described by `label`.
pub(super) fn open(w: f64, h: f64, label: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"100%\" role=\"img\" aria-label=\"{label}\" font-family=\"sans-serif\" font-size=\"12\">"
    )
}
