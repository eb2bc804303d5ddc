//! The console's charts, drawn here as SVG so the page needs no chart
//! library: calls over time (stacked: ok below, errors above) and
//! horizontal bars for the most used and most failing tools. Every text is
//! escaped; colours come from classes the console's CSS styles, so the SVG
//! carries no inline style (the page's CSP allows none).

use std::fmt::Write;

use store::{Bucket, UsageRow};

const WIDTH: usize = 720;
const HEIGHT: usize = 180;
/// The bar charts sit two abreast on a wide screen: narrower, so their text stays legible.
const BARS_WIDTH: usize = 480;
const AXIS: usize = 24;

use vocab::text::escape_html as escape;

/// Calls per bucket as stacked bars, with the total in `data-total` and
/// each bar's counts in its title (what a pointer over it shows).
pub(super) fn calls_over_time(series: &[Bucket], label: &str) -> String {
    let max = series.iter().map(|b| b.calls).max().unwrap_or(0).max(1);
    let total: u64 = series.iter().map(|b| b.calls).sum();
    let plot = (HEIGHT - AXIS) as f64;
    let slot = WIDTH as f64 / series.len().max(1) as f64;
    let bar = (slot * 0.8).max(1.0);
    let mut svg = format!(
        r#"<svg class="chart calls" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" data-total="{total}">"#,
        escape(label)
    );
    let _ = write!(svg, "<title>{}</title>", escape(label));
    for (i, b) in series.iter().enumerate() {
        if b.calls == 0 {
            continue;
        }
        let x = i as f64 * slot + (slot - bar) / 2.0;
        // One stack from the axis: the ok calls from the axis up to `split`,
        // the errors on them up to `top`. Both edges are rounded to what the
        // SVG writes, so the parts adjoin and add up to the bar exactly.
        let top = tenth(plot - plot * b.calls as f64 / max as f64);
        let split = tenth(plot - plot * b.calls.saturating_sub(b.errors) as f64 / max as f64);
        let title = format!("{}: {} calls, {} errors", b.start, b.calls, b.errors);
        let _ = write!(
            svg,
            r#"<g class="bar" data-calls="{}" data-errors="{}"><title>{}</title><rect class="ok" x="{x:.1}" y="{split:.1}" width="{bar:.1}" height="{:.1}"/>"#,
            b.calls,
            b.errors,
            escape(&title),
            plot - split
        );
        if b.errors > 0 {
            let _ = write!(
                svg,
                r#"<rect class="err" x="{x:.1}" y="{top:.1}" width="{bar:.1}" height="{:.1}"/>"#,
                split - top
            );
        }
        svg.push_str("</g>");
    }
    close_over_time(&mut svg, series, &format!("peak {max}"));
    svg
}

/// `v` rounded to a tenth, the precision the charts write coordinates in.
fn tenth(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The axis under a chart over time, its first bucket at the left and
/// `now · {end}` at the right, and the end of the SVG.
fn close_over_time(svg: &mut String, series: &[Bucket], end: &str) {
    let plot = HEIGHT - AXIS;
    let _ = write!(
        svg,
        r#"<line class="axis" x1="0" y1="{plot}" x2="{WIDTH}" y2="{plot}"/><text class="tick" x="0" y="{}">{}</text><text class="tick end" x="{WIDTH}" y="{}">now · {}</text></svg>"#,
        HEIGHT - 6,
        escape(series.first().map_or("", |b| b.start.as_str())),
        HEIGHT - 6,
        escape(end)
    );
}

/// o200k tokens discovery saved per bucket as bars (a bucket that cost
/// more than it saved draws none), with the total in `data-total`, the
/// bytes code mode kept in `data-kept`, and each bucket's figures in its
/// bar's title.
pub(super) fn saved_over_time(series: &[Bucket], label: &str) -> String {
    let max = series.iter().map(|b| b.saved_tokens).max().unwrap_or(0).max(1);
    let total: i64 = series.iter().map(|b| b.saved_tokens).sum();
    let kept: i64 = series.iter().map(|b| b.kept_bytes).sum();
    let plot = (HEIGHT - AXIS) as f64;
    let slot = WIDTH as f64 / series.len().max(1) as f64;
    let bar = (slot * 0.8).max(1.0);
    let mut svg = format!(
        r#"<svg class="chart saved" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{0}" data-total="{total}" data-kept="{kept}"><title>{0}</title>"#,
        escape(label)
    );
    for (i, b) in series
        .iter()
        .enumerate()
        .filter(|(_, b)| b.saved_tokens > 0 || b.kept_bytes > 0)
    {
        let x = i as f64 * slot + (slot - bar) / 2.0;
        let h = plot * b.saved_tokens.max(0) as f64 / max as f64;
        let title = format!(
            "{}: {} tokens saved, {} bytes kept by code mode",
            b.start, b.saved_tokens, b.kept_bytes
        );
        let _ = write!(
            svg,
            r#"<g class="bar" data-saved="{}" data-kept="{}"><title>{}</title><rect class="ok" x="{x:.1}" y="{:.1}" width="{bar:.1}" height="{h:.1}"/></g>"#,
            b.saved_tokens,
            b.kept_bytes,
            escape(&title),
            plot - h
        );
    }
    close_over_time(&mut svg, series, &format!("{total} tokens saved"));
    svg
}

/// Horizontal bars of `value(row)` for the first `limit` rows (those with a value).
pub(super) fn top_bars(rows: &[UsageRow], value: impl Fn(&UsageRow) -> u64, limit: usize, label: &str) -> String {
    let shown: Vec<(&UsageRow, u64)> = rows
        .iter()
        .map(|r| (r, value(r)))
        .filter(|(_, v)| *v > 0)
        .take(limit)
        .collect();
    let row_height = 26;
    let height = (shown.len() * row_height).max(row_height);
    let max = shown.iter().map(|(_, v)| *v).max().unwrap_or(1).max(1);
    let names = BARS_WIDTH * 2 / 5;
    let room = (BARS_WIDTH - names - 40) as f64;
    let mut svg = format!(
        r#"<svg class="chart bars" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {BARS_WIDTH} {height}" role="img" aria-label="{0}"><title>{0}</title>"#,
        escape(label)
    );
    if shown.is_empty() {
        let _ = write!(svg, r#"<text class="tick" x="0" y="18">nothing in this range</text>"#);
    }
    for (i, (row, v)) in shown.iter().enumerate() {
        let y = i * row_height;
        let w = (room * *v as f64 / max as f64).max(1.0);
        let _ = write!(
            svg,
            r#"<g class="bar" data-name="{0}" data-value="{v}"><title>{0}: {v}</title><text class="name" x="{1}" y="{2}">{0}</text><rect class="{3}" x="{4}" y="{5}" width="{w:.1}" height="16"/><text class="tick" x="{6:.1}" y="{2}">{v}</text></g>"#,
            escape(&row.name),
            names - 8,
            y + 17,
            if label.contains("fail") { "err" } else { "ok" },
            names,
            y + 4,
            names as f64 + w + 6.0
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, calls: u64, errors: u64) -> UsageRow {
        UsageRow {
            name: name.into(),
            calls,
            errors,
            timeouts: 0,
            p50_ms: 1,
            p95_ms: 2,
            saved_tokens: 0,
            kept_bytes: 0,
        }
    }

    #[test]
    fn the_calls_chart_counts_every_call_and_escapes_labels() {
        let series = vec![
            Bucket {
                start: "2026-11-25T06".into(),
                calls: 3,
                errors: 1,
                saved_tokens: 0,
                kept_bytes: 0,
            },
            Bucket {
                start: "2026-11-25T07".into(),
                calls: 0,
                errors: 0,
                saved_tokens: 0,
                kept_bytes: 0,
            },
            Bucket {
                start: "2026-11-25T08".into(),
                calls: 5,
                errors: 0,
                saved_tokens: 0,
                kept_bytes: 0,
            },
        ];
        let saved = saved_over_time(&series, "saved");
        assert!(saved.contains(r#"data-total="0" data-kept="0""#), "{saved}");
        let svg = calls_over_time(&series, "calls <day>");
        assert!(svg.contains(r#"data-total="8""#));
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2, "empty buckets draw nothing");
        assert_eq!(svg.matches(r#"class="err""#).count(), 1);
        assert!(svg.contains("calls &lt;day&gt;") && !svg.contains("<day>"));
        assert!(!svg.contains("style="), "no inline style under the console's CSP");
    }

    fn bucket(start: &str, calls: u64, errors: u64) -> Bucket {
        Bucket {
            start: start.into(),
            calls,
            errors,
            saved_tokens: 0,
            kept_bytes: 0,
        }
    }

    /// The `y` and `height` of the first `<rect class="{class}" …/>` in `svg`.
    fn rect(svg: &str, class: &str) -> (f64, f64) {
        let start = svg
            .find(&format!(r#"<rect class="{class}" "#))
            .unwrap_or_else(|| panic!("no {class} rect in {svg}"));
        let end = start + svg[start..].find("/>").expect("the rect is closed");
        let tag = &svg[start..end];
        let number = |name: &str| -> f64 {
            let from = tag
                .find(&format!(r#" {name}=""#))
                .unwrap_or_else(|| panic!("no {name} in {tag}"))
                + name.len()
                + 3;
            let len = tag[from..].find('"').expect("the attribute's value is quoted");
            tag[from..from + len]
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{name} in {tag} is not a number: {e}"))
        };
        (number("y"), number("height"))
    }

    #[test]
    fn a_bar_with_errors_is_one_stack_standing_on_the_axis() {
        // The peak is 7 calls, so the second bar's edges fall between tenths.
        let series = vec![bucket("2026-11-25T06", 7, 3), bucket("2026-11-25T07", 3, 1)];
        let svg = calls_over_time(&series, "calls");
        let axis = (HEIGHT - AXIS) as f64;
        assert!(svg.contains(&format!(r#"class="axis" x1="0" y1="{axis}""#)), "{svg}");
        for (b, peak) in series.iter().zip([true, false]) {
            let from = svg
                .find(&format!(
                    r#"<g class="bar" data-calls="{}" data-errors="{}">"#,
                    b.calls, b.errors
                ))
                .unwrap_or_else(|| panic!("no bar for {} in {svg}", b.start));
            let bar = &svg[from..from + svg[from..].find("</g>").expect("the bar's group is closed")];
            let (ok_y, ok_height) = rect(bar, "ok");
            let (err_y, err_height) = rect(bar, "err");
            let close = |a: f64, z: f64| (a - z).abs() < 1e-6;
            assert!(close(ok_y + ok_height, axis), "the ok part stands on the axis: {bar}");
            assert!(close(err_y + err_height, ok_y), "the errors sit on the ok part: {bar}");
            assert!(ok_height > 0.0 && err_height > 0.0, "{bar}");
            let height = axis * b.calls as f64 / 7.0;
            assert!(
                (axis - err_y - height).abs() <= 0.05,
                "the stack is as high as its calls: {bar}"
            );
            assert!(
                (err_height - axis * b.errors as f64 / 7.0).abs() <= 0.1,
                "the error part is as high as its errors: {bar}"
            );
            if peak {
                assert!(close(err_y, 0.0), "the peak's bar fills the plot: {bar}");
            }
        }
    }

    #[test]
    fn top_bars_skip_zero_and_escape_names() {
        let rows = vec![row("a:<x>", 5, 0), row("b:y", 3, 2), row("c:z", 1, 0)];
        let svg = top_bars(&rows, |r| r.errors, 10, "top failing tools");
        assert_eq!(svg.matches(r#"class="bar""#).count(), 1);
        assert!(svg.contains(r#"data-name="b:y""#));
        let svg = top_bars(&rows, |r| r.calls, 2, "top tools");
        assert!(svg.contains("a:&lt;x&gt;") && !svg.contains("c:z"));
    }
}
