//! A grouped bar chart of counts per category, one colour per series: the
//! Turbulence CorrSc histogram (the paper's Figure 4, questions per score
//! bin for each model). Not for: deciding what is counted.

use super::svg::Svg;

const PLOT_LEFT: f64 = 50.0;
const PLOT_TOP: f64 = 40.0;
const PLOT_HEIGHT: f64 = 220.0;
const SLOT: f64 = 56.0;
const COLOURS: [&str; 6] = [
    "#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860",
];

/// Bars of `series` (name, one count per label) over `labels`, under `title`.
pub fn bar_chart_svg(title: &str, labels: &[&str], series: &[(String, Vec<usize>)]) -> String {
    let width = PLOT_LEFT + SLOT * labels.len() as f64 + 20.0;
    let height = PLOT_TOP + PLOT_HEIGHT + 60.0 + 16.0 * series.len() as f64;
    let most = series
        .iter()
        .flat_map(|(_, counts)| counts.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let y = |count: f64| PLOT_TOP + PLOT_HEIGHT * (1.0 - count / most as f64);
    let mut svg = Svg::new(width, height);
    svg.text(PLOT_LEFT, 20.0, "font-weight=\"bold\"", title);
    svg.shape(&format!(
        "<line x1=\"{PLOT_LEFT}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"black\"/>",
        bottom = y(0.0),
        right = width - 20.0,
    ));
    let tick_x = PLOT_LEFT - 6.0;
    svg.text(
        tick_x,
        y(most as f64) + 4.0,
        "text-anchor=\"end\"",
        &most.to_string(),
    );
    svg.text(tick_x, y(0.0), "text-anchor=\"end\"", "0");
    let bar = (SLOT - 8.0) / series.len().max(1) as f64;
    for (slot, label) in labels.iter().enumerate() {
        let left = PLOT_LEFT + SLOT * slot as f64 + 4.0;
        for (index, (_, counts)) in series.iter().enumerate() {
            let count = counts.get(slot).copied().unwrap_or(0) as f64;
            svg.shape(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" fill=\"{}\"/>",
                left + bar * index as f64,
                y(count),
                y(0.0) - y(count),
                COLOURS[index % COLOURS.len()]
            ));
        }
        svg.text(
            left + (SLOT - 8.0) / 2.0,
            y(0.0) + 14.0,
            "text-anchor=\"middle\" font-size=\"10\"",
            label,
        );
    }
    for (index, (name, _)) in series.iter().enumerate() {
        let row = PLOT_TOP + PLOT_HEIGHT + 40.0 + 16.0 * index as f64;
        svg.shape(&format!(
            "<rect x=\"{PLOT_LEFT}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/>",
            row - 9.0,
            COLOURS[index % COLOURS.len()]
        ));
        svg.text(PLOT_LEFT + 16.0, row, "", name);
    }
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_series_and_label_with_escaped_text() {
        let svg = bar_chart_svg(
            "a < b",
            &["0", "(0, 0.1)", "1"],
            &[("m&1".into(), vec![3, 0, 1]), ("m2".into(), vec![1, 2, 0])],
        );
        assert_eq!(svg.matches("<rect x=").count(), 3 * 2 + 2);
        assert!(svg.contains("a &lt; b") && svg.contains("m&amp;1"));
        assert!(svg.ends_with("</svg>\n"));
    }
}
