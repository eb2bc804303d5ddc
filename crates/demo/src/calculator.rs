//! The demo's calculator tools: arithmetic over f64 and temperature units.

/// Evaluates `+ - * / ^`, unary minus and parentheses over f64.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    let mut pos = 0;
    let value = expr(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("unexpected '{}' at position {}", tokens[pos], pos + 1));
    }
    if !value.is_finite() {
        return Err("the result is not a finite number (division by zero?)".into());
    }
    Ok(value)
}

fn expr(t: &[char], pos: &mut usize) -> Result<f64, String> {
    let mut value = term(t, pos)?;
    while let Some(&op) = t.get(*pos).filter(|c| matches!(c, '+' | '-')) {
        *pos += 1;
        let rhs = term(t, pos)?;
        value = if op == '+' { value + rhs } else { value - rhs };
    }
    Ok(value)
}

fn term(t: &[char], pos: &mut usize) -> Result<f64, String> {
    let mut value = power(t, pos)?;
    while let Some(&op) = t.get(*pos).filter(|c| matches!(c, '*' | '/')) {
        *pos += 1;
        let rhs = power(t, pos)?;
        value = if op == '*' { value * rhs } else { value / rhs };
    }
    Ok(value)
}

fn power(t: &[char], pos: &mut usize) -> Result<f64, String> {
    let base = unary(t, pos)?;
    if t.get(*pos) == Some(&'^') {
        *pos += 1;
        return Ok(base.powf(power(t, pos)?));
    }
    Ok(base)
}

fn unary(t: &[char], pos: &mut usize) -> Result<f64, String> {
    match t.get(*pos) {
        Some('-') => {
            *pos += 1;
            Ok(-unary(t, pos)?)
        }
        Some('(') => {
            *pos += 1;
            let v = expr(t, pos)?;
            if t.get(*pos) != Some(&')') {
                return Err("missing ')'".into());
            }
            *pos += 1;
            Ok(v)
        }
        Some(c) if c.is_ascii_digit() || *c == '.' => {
            let start = *pos;
            while t.get(*pos).is_some_and(|c| c.is_ascii_digit() || *c == '.') {
                *pos += 1;
            }
            let s: String = t[start..*pos].iter().collect();
            s.parse().map_err(|_| format!("'{s}' is not a number"))
        }
        Some(c) => Err(format!("unexpected '{c}' at position {}", *pos + 1)),
        None => Err("the expression ends too early".into()),
    }
}

pub(super) fn convert_temperature(value: f64, from: &str, to: &str) -> Result<f64, String> {
    let kelvin = match from {
        "C" => value + 273.15,
        "F" => (value - 32.0) * 5.0 / 9.0 + 273.15,
        "K" => value,
        other => return Err(format!("unknown unit '{other}'")),
    };
    Ok(match to {
        "C" => kelvin - 273.15,
        "F" => (kelvin - 273.15) * 9.0 / 5.0 + 32.0,
        "K" => kelvin,
        other => return Err(format!("unknown unit '{other}'")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        assert_eq!(evaluate("(2 + 3) * 4").unwrap(), 20.0);
        assert_eq!(evaluate("2 ^ 3 ^ 2").unwrap(), 512.0);
        assert_eq!(evaluate("-4 / 2 + 1").unwrap(), -1.0);
        assert!(evaluate("1 / 0").unwrap_err().contains("finite"));
        assert!(evaluate("(1 + 2").unwrap_err().contains("')'"));
        assert!(evaluate("2 $ 3").unwrap_err().contains("'$'"));
    }

    #[test]
    fn temperatures() {
        assert!((convert_temperature(100.0, "C", "F").unwrap() - 212.0).abs() < 1e-9);
        assert!((convert_temperature(0.0, "K", "C").unwrap() + 273.15).abs() < 1e-9);
    }
}
