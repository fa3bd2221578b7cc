//! Error text shared by the crates: user-typed names shown on one line, numbers shown short, a value
//! beyond its bound.

use std::borrow::Cow;

/// `s` as an error quotes it: control characters (line breaks, tabs, escapes) written as `\n`, `\t`,
/// `\u{1b}`, so the error stays one line. Quotes and backslashes are left as typed: a message quoting
/// another (a controller's error inside a scenario's) is passed through here again and must not change.
pub fn one_line(s: &str) -> Cow<'_, str> {
    // U+2028/U+2029 break lines too but are not control characters.
    let escaped = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !s.chars().any(escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A number as an error shows it: in exponent form where the decimal one is long (`1e300`, not 301 digits).
pub fn num(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-6..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// serde's message with the float it quotes shown as [`num`] shows it: serde writes `1e300` in 301
/// digits (`invalid type: floating point `1000...0.0`, expected u32`).
pub fn short_floats(msg: &str) -> String {
    const AT: &str = "floating point `";
    let Some(start) = msg.find(AT).map(|i| i + AT.len()) else {
        return msg.to_string();
    };
    let Some(len) = msg[start..].find('`') else {
        return msg.to_string();
    };
    match msg[start..start + len].parse::<f64>() {
        // Short ones stay as serde writes them (`2.0`, not `2`).
        Ok(x) if num(x).contains('e') => {
            format!("{}{}{}", &msg[..start], num(x), &msg[start + len..])
        }
        _ => msg.to_string(),
    }
}

/// The reason a value is refused for exceeding what its unit can mean, the same wherever it is checked
/// (a scenario's times, a controller's parameters): `1e300 ms is beyond 1e10 ms (the longest run)`.
pub fn beyond_bound(x: f64, unit: &str, most: f64, what: &str) -> String {
    format!("{} {unit} is beyond {most:e} {unit} ({what})", num(x))
}

/// The reason a positive time is refused for being below the clock's resolution, the same wherever it
/// is checked: `1e-12 ms is below 1 ns, the clock's resolution` (it would be 0).
pub fn below_clock(x: f64, unit: &str) -> String {
    format!("{} {unit} is below 1 ns, the clock's resolution", num(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_break_or_a_tab_is_escaped_and_quotes_are_left_as_typed() {
        assert_eq!(one_line("fi\nxed"), "fi\\nxed");
        assert_eq!(one_line("a\r\nb"), "a\\r\\nb");
        assert_eq!(one_line("a\tb"), "a\\tb");
        assert_eq!(one_line("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(one_line("a\u{2028}b"), "a\\u{2028}b");
        assert_eq!(one_line("it's \"x\" \\n"), "it's \"x\" \\n");
        assert!(matches!(one_line("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn escaping_twice_is_escaping_once() {
        let once = one_line("a\nb\t\"c\"").into_owned();
        assert_eq!(one_line(&once), once);
    }

    #[test]
    fn a_float_serde_quotes_in_full_is_shown_short_and_a_short_one_as_serde_wrote_it() {
        let long = format!(
            "invalid type: floating point `1{}.0`, expected u32",
            "0".repeat(300)
        );
        assert_eq!(
            short_floats(&long),
            "invalid type: floating point `1e300`, expected u32"
        );
        let short = "invalid type: floating point `2.0`, expected u32";
        assert_eq!(short_floats(short), short);
        assert_eq!(short_floats("no float here"), "no float here");
    }

    #[test]
    fn a_value_beyond_its_bound_names_both_in_its_unit() {
        assert_eq!(
            beyond_bound(1e300, "ms", 1e10, "the longest run"),
            "1e300 ms is beyond 1e10 ms (the longest run)"
        );
        assert_eq!(
            beyond_bound(2e7, "s", 1e7, "the longest run"),
            "20000000 s is beyond 1e7 s (the longest run)"
        );
    }
}
