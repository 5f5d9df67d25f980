//! The page: the runs' data as one JSON object inside the document, and
//! the document itself (`page.html`, with its styles and drawing code).

use std::fmt::Write as _;

use partalloc_allocators::Partition;

use crate::data::{self, Estimate, NodeRun};
use crate::{MAX_REPORT_JOBS, ReportError, ReportOptions, RunView};

/// The page, with `TITLE` and `DATA` to fill in.
const TEMPLATE: &str = include_str!("page.html");

/// Points of each distribution curve.
const CDF_POINTS: usize = 400;

/// The HTML document around the data.
pub(crate) fn document(title: &str, json: &str) -> String {
    // The title goes into the part before the data only, so nothing in the
    // title or the data is ever read as a marker.
    let (head, tail) = TEMPLATE.split_once("/*DATA*/").unwrap_or((TEMPLATE, ""));
    let mut out = head.replace("/*TITLE*/", &html_text(title));
    out.reserve(json.len() + tail.len());
    out.push_str(json);
    out.push_str(tail);
    out
}

/// Text for an HTML element: the markup characters and control
/// characters escaped.
fn html_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// A JSON string that is also safe inside a `<script>` element: quotes,
/// backslashes, control characters and `<`, `>`, `&` escaped.
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}') => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number for JSON: finite values in Rust's shortest form, others null.
fn json_num(out: &mut String, v: f64) {
    if v.is_finite() {
        let _ = write!(out, "{v}");
    } else {
        out.push_str("null");
    }
}

fn json_nums(out: &mut String, vs: impl IntoIterator<Item = f64>) {
    out.push('[');
    for (i, v) in vs.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_num(out, v);
    }
    out.push(']');
}

fn json_estimate(out: &mut String, e: Estimate) {
    out.push('[');
    json_num(out, e.mean);
    out.push(',');
    json_num(out, e.half_width.unwrap_or(f64::NAN));
    out.push(']');
}

/// A partition as a person reads it: a hostlist on a Slurm machine, the
/// box or subcube elsewhere, node id ranges for other node sets.
fn partition_text(view: &RunView<'_>, partition: &Partition, runs: &[NodeRun]) -> String {
    if let Some(slurm) = view.topology.as_slurm() {
        let ids: Vec<u32> = runs.iter().flat_map(|r| r.first..r.first + r.len).collect();
        return slurm.hostlist(&ids);
    }
    match partition {
        Partition::Nodes(_) => format!("nodes {}", data::ranges_text(runs, "–", ", ")),
        other => other.to_string(),
    }
}

/// Writes the `{"runs": […]}` object of the page.
pub(crate) fn write_data(
    out: &mut String,
    runs: &[RunView<'_>],
    options: &ReportOptions,
) -> Result<(), ReportError> {
    out.push_str("{\"runs\":[");
    for (k, view) in runs.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        write_run(out, view, options)?;
    }
    out.push_str("]}");
    Ok(())
}

fn write_run(
    out: &mut String,
    view: &RunView<'_>,
    options: &ReportOptions,
) -> Result<(), ReportError> {
    let records = view.records;
    if records.is_empty() {
        return Err(ReportError::NoJobs {
            label: view.label.to_owned(),
        });
    }
    if records.len() > MAX_REPORT_JOBS {
        return Err(ReportError::TooLarge {
            label: view.label.to_owned(),
            jobs: records.len(),
            max: MAX_REPORT_JOBS,
        });
    }
    // Completion order for the batch means; start order for the drawing.
    let mut by_end: Vec<&partalloc_simkit::JobRecord> = records.iter().collect();
    by_end.sort_by(|a, b| a.end.total_cmp(&b.end).then(a.id.cmp(&b.id)));
    let mut drawn: Vec<&partalloc_simkit::JobRecord> = records.iter().collect();
    drawn.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.id.cmp(&b.id)));
    drawn.truncate(options.max_drawn);

    let n = view.topology.num_nodes();
    out.push('{');
    out.push_str("\"label\":");
    json_str(out, view.label);
    out.push_str(",\"machine\":");
    json_str(out, &view.topology.to_string());
    let _ = write!(
        out,
        ",\"nodes\":{n},\"total\":{},\"drawn\":{}",
        records.len(),
        drawn.len()
    );
    out.push_str(",\"groups\":[");
    for (i, g) in data::groups(view.topology).iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        json_str(out, &g.label);
        let _ = write!(out, ",{},{}]", g.first, g.len);
    }
    out.push(']');

    // The drawn jobs, one array per field.
    let mut pieces: Vec<Vec<NodeRun>> = Vec::with_capacity(drawn.len());
    for r in &drawn {
        let runs =
            data::node_runs(&r.partition, view.topology).ok_or_else(|| ReportError::Partition {
                label: view.label.to_owned(),
                job: r.id,
                machine: view.topology.to_string(),
            })?;
        pieces.push(runs);
    }
    out.push_str(",\"jobs\":{\"id\":");
    json_nums(out, drawn.iter().map(|r| r.id as f64));
    for (name, f) in [
        (
            "submit",
            (|r: &&partalloc_simkit::JobRecord| r.arrival) as fn(&&_) -> f64,
        ),
        ("start", |r| r.start),
        ("end", |r| r.end),
        ("asked", |r| r.requested as f64),
        ("got", |r| r.granted as f64),
        ("bsld", |r| r.bounded_slowdown),
    ] {
        let _ = write!(out, ",\"{name}\":");
        json_nums(out, drawn.iter().map(f));
    }
    out.push_str(",\"part\":[");
    for (i, (r, runs)) in drawn.iter().zip(&pieces).enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_str(out, &partition_text(view, &r.partition, runs));
    }
    out.push_str("],\"runs\":[");
    for (i, runs) in pieces.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        for (k, v) in data::encode_runs(runs).iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{v}");
        }
        out.push(']');
    }
    out.push_str("]}");

    // Over time, distributions and summary: every job.
    let over = data::over_time(records);
    out.push_str(",\"over\":{\"t\":");
    json_nums(out, over.times.iter().copied());
    out.push_str(",\"busy\":");
    json_nums(out, over.busy.iter().copied());
    out.push_str(",\"queue\":");
    json_nums(out, over.queue.iter().copied());
    out.push('}');
    // Stranded nodes over time, where the machine defines them.
    out.push_str(",\"stranded\":");
    match data::stranded_over_time(view.topology, records, data::STRANDED_SAMPLES) {
        Some((t, v)) => {
            out.push_str("{\"t\":");
            json_nums(out, t);
            out.push_str(",\"v\":");
            json_nums(out, v);
            out.push('}');
        }
        None => out.push_str("null"),
    }
    for (name, values) in [
        (
            "cdf_wait",
            records.iter().map(|r| r.wait).collect::<Vec<_>>(),
        ),
        (
            "cdf_bsld",
            records.iter().map(|r| r.bounded_slowdown).collect(),
        ),
    ] {
        let _ = write!(out, ",\"{name}\":[");
        for (i, (v, p)) in data::cdf(values, CDF_POINTS).into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('[');
            json_num(out, v);
            out.push(',');
            json_num(out, p);
            out.push(']');
        }
        out.push(']');
    }
    let span_start = records
        .iter()
        .map(|r| r.arrival)
        .fold(f64::INFINITY, f64::min);
    let span_end = records
        .iter()
        .map(|r| r.end)
        .fold(f64::NEG_INFINITY, f64::max);
    let node_time: f64 = records
        .iter()
        .map(|r| r.granted as f64 * (r.end - r.start))
        .sum();
    let util = node_time / (n as f64 * (span_end - span_start));
    out.push_str(",\"summary\":{\"wait\":");
    json_estimate(
        out,
        data::batch_means(&by_end.iter().map(|r| r.wait).collect::<Vec<_>>()),
    );
    out.push_str(",\"response\":");
    json_estimate(
        out,
        data::batch_means(&by_end.iter().map(|r| r.response).collect::<Vec<_>>()),
    );
    out.push_str(",\"bsld\":");
    json_estimate(
        out,
        data::batch_means(
            &by_end
                .iter()
                .map(|r| r.bounded_slowdown)
                .collect::<Vec<_>>(),
        ),
    );
    out.push_str(",\"util\":");
    json_num(out, util);
    let _ = write!(out, ",\"batches\":{}}}", data::BATCHES);
    out.push('}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_and_markup_characters_are_escaped() {
        let mut s = String::new();
        json_str(&mut s, "a</script>\"\\\u{1b}[2J");
        assert_eq!(s, r#""a\u003c/script\u003e\"\\\u001b[2J""#);
        assert_eq!(html_text("<b>&\u{7}"), "&lt;b&gt;&amp;\\u{7}");
        let mut n = String::new();
        json_nums(&mut n, [1.5, f64::NAN, 3.0]);
        assert_eq!(n, "[1.5,null,3]");
    }
}
