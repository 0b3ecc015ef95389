//! The layout every hivectl answer shares: how it is printed ([`Style`]),
//! aligned columns with an optionally coloured one, and cells cleaned of
//! control characters and shortened. Used by `render` (the answers) and
//! `roster` (the roster's tables), neither of which owns it.

use std::fmt::Write as _;

use super::args::{JournalFormat, TableView};

/// Longest free text shown in a table cell; `--json` has the full value.
const MAX_CELL: usize = 80;

/// How answers are printed.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// `-q`, `--no-legend`.
    pub view: TableView,
    /// `-o` of `logs`/`journal`.
    pub journal: JournalFormat,
    /// ANSI colour for states (a terminal without `NO_COLOR`).
    pub colour: bool,
    /// `pending --all`: resolved approvals too.
    pub history: bool,
    /// Unix seconds now, for uptimes.
    pub now: i64,
}

impl Default for Style {
    fn default() -> Self {
        Self {
            view: TableView::default(),
            journal: JournalFormat::Short,
            colour: false,
            history: false,
            now: 0,
        }
    }
}

const RESET: &str = "\x1b[0m";

/// A cleaned, shortened cell; `-` when absent or empty.
pub fn or_dash(value: Option<&str>) -> String {
    match value.map(clean) {
        Some(v) if !v.is_empty() => shorten(&v),
        _ => "-".into(),
    }
}

/// Control characters (newlines, tabs, ESC, DEL, C1) become spaces.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

pub fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_CELL {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_CELL - 1).collect();
    out.push('…');
    out
}

/// Columns separated by two spaces, each as wide as its widest cell; the
/// last column is not padded (no trailing blanks). No header when `headers`
/// is empty.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    painted_table(headers, rows, None)
}

/// [`table`], with the cells of one column of the body coloured (`paint`:
/// the column and each body row's colour), after padding so the escape
/// codes do not count as width.
pub fn painted_table(
    headers: &[&str],
    rows: &[Vec<String>],
    paint: Option<(usize, &[Option<&'static str>])>,
) -> String {
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    let all: Vec<&Vec<String>> = (!header.is_empty())
        .then_some(&header)
        .into_iter()
        .chain(rows)
        .collect();
    let columns = all.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            all.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let body_from = all.len() - rows.len();
    let mut out = String::new();
    for (r, row) in all.into_iter().enumerate() {
        let colour = match paint {
            Some((col, colours)) if r >= body_from => colours
                .get(r - body_from)
                .copied()
                .flatten()
                .map(|c| (col, c)),
            _ => None,
        };
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let (open, close) = match colour {
                Some((col, code)) if col == c => (code, RESET),
                _ => ("", ""),
            };
            if c + 1 == row.len() {
                let _ = write!(line, "{open}{cell}{close}");
            } else {
                let pad = widths[c] - cell.chars().count();
                let _ = write!(line, "{open}{cell}{close}{:pad$}  ", "");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
