//! The loss curve as an SVG image, written by hand: a few lines of markup
//! need no plotting crate and no fonts (the viewer draws the text).

use std::fmt::Write;

/// An SVG line chart of the training loss: every step's loss (light) and
/// each epoch's mean (dark), with the test accuracy of each epoch in the
/// legend's place at the right.
///
/// ```
/// let svg = pytree_examples::plot::loss_curve_svg(&[2.3, 1.0, 0.5, 0.4], 2, &[0.8, 0.9]);
/// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
/// assert_eq!(svg.matches("<polyline").count(), 2);
/// ```
pub fn loss_curve_svg(step_losses: &[f32], epochs: usize, test_accuracy: &[f64]) -> String {
    let (w, h) = (720.0f64, 400.0f64);
    let (left, right, top, bottom) = (60.0, 150.0, 30.0, 45.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let n = step_losses.len().max(2);
    let finite = step_losses.iter().copied().filter(|v| v.is_finite());
    let y_max = f64::from(finite.fold(0.0f32, f32::max)).max(1e-6) * 1.05;
    let x_of = |i: f64| left + pw * i / (n - 1) as f64;
    let y_of = |v: f64| top + ph * (1.0 - (v / y_max).clamp(0.0, 1.0));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">Training loss (softmax cross-entropy), digits MLP</text>"#,
        left + pw / 2.0
    );
    // Axes and ticks.
    let _ = writeln!(
        s,
        r#"<path d="M{left},{top} V{} H{}" stroke="black" fill="none"/>"#,
        top + ph,
        left + pw
    );
    for k in 0..=4 {
        let v = y_max * f64::from(k) / 4.0;
        let y = y_of(v);
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{y:.1}" x2="{left}" y2="{y:.1}" stroke="black"/><text x="{}" y="{:.1}" text-anchor="end">{v:.2}</text><line x1="{left}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/>"##,
            left - 4.0,
            left - 6.0,
            y + 4.0,
            left + pw
        );
    }
    let per_epoch = step_losses.len() / epochs.max(1);
    for e in 0..=epochs {
        if e % epochs.div_ceil(10).max(1) != 0 && e != epochs {
            continue;
        }
        let x = x_of((e * per_epoch) as f64);
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{e}</text>"#,
            top + ph,
            top + ph + 4.0,
            top + ph + 17.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">epoch</text>"#,
        left + pw / 2.0,
        h - 8.0
    );
    // Every step, then the epoch means.
    let points: Vec<String> = step_losses
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, &v)| format!("{:.1},{:.1}", x_of(i as f64), y_of(f64::from(v))))
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline fill="none" stroke="#9ecae1" stroke-width="1" points="{}"/>"##,
        points.join(" ")
    );
    let means: Vec<String> = (0..epochs)
        .filter(|_| per_epoch > 0)
        .map(|e| {
            let chunk = &step_losses[e * per_epoch..(e + 1) * per_epoch];
            let mean = chunk.iter().map(|&v| f64::from(v)).sum::<f64>() / chunk.len() as f64;
            format!(
                "{:.1},{:.1}",
                x_of(((e + 1) * per_epoch - 1) as f64),
                y_of(mean)
            )
        })
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline fill="none" stroke="#08519c" stroke-width="2" points="{}"/>"##,
        means.join(" ")
    );
    // Legend.
    let lx = left + pw + 12.0;
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="#9ecae1"/><text x="{}" y="{}">each step</text>"##,
        top + 10.0,
        lx + 20.0,
        top + 10.0,
        lx + 25.0,
        top + 14.0
    );
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="#08519c" stroke-width="2"/><text x="{}" y="{}">epoch mean</text>"##,
        top + 28.0,
        lx + 20.0,
        top + 28.0,
        lx + 25.0,
        top + 32.0
    );
    if let Some(last) = test_accuracy.last() {
        let _ = writeln!(
            s,
            r#"<text x="{lx}" y="{}">test accuracy</text><text x="{lx}" y="{}">after epoch {}: {:.1}%</text>"#,
            top + 60.0,
            top + 76.0,
            test_accuracy.len(),
            last * 100.0
        );
    }
    s.push_str("</svg>\n");
    s
}
