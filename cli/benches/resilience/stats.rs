//! Samples, their summaries, the printed table and the JSON file.

use std::time::Duration;

use serde_json::{Value, json};

/// Samples of one figure (milliseconds, or any unit named by `unit`) plus the repetitions that
/// failed; a failed repetition is counted, never dropped silently.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    pub values: Vec<f64>,
    pub failed: usize,
    /// Why repetitions failed (first few, for the report).
    pub errors: Vec<String>,
}

impl Samples {
    pub fn push(&mut self, value: f64) {
        self.values.push(value);
    }

    pub fn push_ms(&mut self, value: Duration) {
        self.values.push(value.as_secs_f64() * 1e3);
    }

    pub fn fail(&mut self, why: impl Into<String>) {
        self.failed += 1;
        if self.errors.len() < 5 {
            self.errors.push(why.into());
        }
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.values.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v
    }

    /// The `q` quantile (nearest rank), NaN when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        let v = self.sorted();
        if v.is_empty() {
            return f64::NAN;
        }
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    }

    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    pub fn p99(&self) -> f64 {
        self.quantile(0.99)
    }
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct Row {
    pub section: &'static str,
    pub name: String,
    pub unit: &'static str,
    pub samples: Samples,
    /// The target, in words, and whether the median meets it (None: no target).
    pub target: Option<(String, bool)>,
    /// Extra notes (ratios, bounds).
    pub note: String,
}

impl Row {
    pub fn new(
        section: &'static str,
        name: impl Into<String>,
        unit: &'static str,
        samples: Samples,
    ) -> Row {
        Row {
            section,
            name: name.into(),
            unit,
            samples,
            target: None,
            note: String::new(),
        }
    }

    pub fn single(
        section: &'static str,
        name: impl Into<String>,
        unit: &'static str,
        value: f64,
    ) -> Row {
        let mut samples = Samples::default();
        samples.push(value);
        Row::new(section, name, unit, samples)
    }

    pub fn target(mut self, words: impl Into<String>, met: bool) -> Row {
        self.target = Some((words.into(), met));
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Row {
        self.note = note.into();
        self
    }

    fn json(&self) -> Value {
        json!({
            "section": self.section,
            "name": self.name,
            "unit": self.unit,
            "n": self.samples.values.len(),
            "failed": self.samples.failed,
            "errors": self.samples.errors,
            "median": finite(self.samples.median()),
            "p99": finite(self.samples.p99()),
            "min": finite(self.samples.quantile(0.0)),
            "max": finite(self.samples.quantile(1.0)),
            "target": self.target.as_ref().map(|(t, _)| t.clone()),
            "target_met": self.target.as_ref().map(|(_, met)| *met),
            "note": self.note,
        })
    }
}

fn finite(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

fn fmt(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x.abs() >= 1000.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

/// The table as Markdown (printed to stdout and pasted into BENCHMARKS.md).
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let mut section = "";
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| r.section);
    for row in sorted {
        if row.section != section {
            section = row.section;
            out.push_str(&format!(
                "\n### {section}\n\n| figure | unit | n | failed | median | p99 | target | note |\n|---|---|---|---|---|---|---|---|\n"
            ));
        }
        let target = match &row.target {
            Some((words, true)) => format!("PASS {words}"),
            Some((words, false)) => format!("MISS {words}"),
            None => String::new(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.name,
            row.unit,
            row.samples.values.len(),
            row.samples.failed,
            fmt(row.samples.median()),
            fmt(row.samples.p99()),
            target,
            row.note
        ));
    }
    out
}

pub fn to_json(rows: &[Row], meta: Value) -> Value {
    json!({
        "meta": meta,
        "rows": rows.iter().map(Row::json).collect::<Vec<_>>(),
    })
}
