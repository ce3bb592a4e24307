//! Reading Python text without running it: bracket depth and strings over
//! a line, the call at a line's start, a top-level split, and whether a
//! value is a plain literal; for the example reader (`examples`) and the
//! signature reader (`behaviour`). Not the examples' forms, nor running
//! anything.

/// `text` without a `#` comment outside strings.
pub(crate) fn without_comment(text: &str) -> &str {
    let mut scan = Scanner::default();
    for (i, c) in text.char_indices() {
        if c == '#' && !scan.in_string() {
            return text[..i].trim_end();
        }
        scan.step(c);
    }
    text
}

/// Whether `text` calls `name` (as a name, not a suffix of another).
pub(crate) fn calls(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let name_start = !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        // MBPP writes `is_Diff (12345)` too.
        name_start && text[at + name.len()..].trim_start().starts_with('(')
    })
}

/// The byte just past the bracket that closes the call starting at 0, whose
/// name is `name_len` bytes long.
pub(crate) fn call_end(line: &str, name_len: usize) -> Option<usize> {
    let mut scan = Scanner::default();
    let after_name = line.get(name_len..)?;
    for (i, c) in after_name.char_indices() {
        scan.step(c);
        if scan.depth == 0 && !scan.in_string() {
            return Some(name_len + i + c.len_utf8());
        }
    }
    None
}

/// Whether `source` is one expression: brackets balanced and no assignment
/// outside brackets.
pub(crate) fn is_expression(source: &str) -> bool {
    let mut scan = Scanner::default();
    let chars: Vec<char> = source.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let outside = scan.depth == 0 && !scan.in_string();
        if outside && c == '=' {
            let before = i.checked_sub(1).map(|j| chars[j]);
            let after = chars.get(i + 1).copied();
            let comparison = matches!(before, Some('=' | '<' | '>' | '!')) || after == Some('=');
            if !comparison {
                return false;
            }
        }
        scan.step(c);
        if scan.depth < 0 {
            return false;
        }
    }
    scan.depth == 0 && !scan.in_string()
}

/// The bracket depth at the end of `text` (strings skipped).
pub(crate) fn depth(text: &str) -> i32 {
    let mut scan = Scanner::default();
    text.chars().for_each(|c| scan.step(c));
    scan.depth
}

/// Splits `text` at `separator` outside brackets and strings.
pub(crate) fn split_top_level(text: &str, separator: char) -> Vec<&str> {
    let mut scan = Scanner::default();
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == separator && scan.depth == 0 && !scan.in_string() {
            pieces.push(&text[start..i]);
            start = i + c.len_utf8();
        }
        scan.step(c);
    }
    pieces.push(&text[start..]);
    pieces
}

/// Bracket depth and string state over a line of Python.
#[derive(Default)]
pub(crate) struct Scanner {
    pub(crate) depth: i32,
    quote: Option<char>,
    escaped: bool,
}

impl Scanner {
    pub(crate) fn in_string(&self) -> bool {
        self.quote.is_some()
    }

    pub(crate) fn step(&mut self, c: char) {
        if let Some(quote) = self.quote {
            if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == quote {
                self.quote = None;
            }
            return;
        }
        match c {
            '\'' | '"' => self.quote = Some(c),
            '(' | '[' | '{' => self.depth += 1,
            ')' | ']' | '}' => self.depth -= 1,
            _ => {}
        }
    }
}

/// Whether `text` is a Python literal made of numbers, strings, `True`,
/// `False`, `None`, and lists, tuples, sets and dicts of them: what a
/// doctest prints and a value a reader can compare without running code.
pub fn is_literal(text: &str) -> bool {
    let tokens = match literal_tokens(text) {
        Some(tokens) if !tokens.is_empty() => tokens,
        _ => return false,
    };
    // A value may not follow a value without a separator between them, a
    // separator needs a value before it, and a colon one after it.
    let mut depth = 0i32;
    let mut previous: Option<Token> = None;
    for token in tokens {
        let after_value = matches!(previous, Some(Token::Value | Token::Close));
        let ok = match token {
            Token::Value | Token::Sign | Token::Open => !after_value,
            Token::Close => previous != Some(Token::Colon) && previous != Some(Token::Sign),
            Token::Comma | Token::Colon => after_value,
        };
        depth += match token {
            Token::Open => 1,
            Token::Close => -1,
            _ => 0,
        };
        if !ok || depth < 0 {
            return false;
        }
        previous = Some(token);
    }
    depth == 0 && matches!(previous, Some(Token::Value | Token::Close))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Value,
    Sign,
    Open,
    Close,
    Comma,
    Colon,
}

fn literal_tokens(text: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        let token = match c {
            c if c.is_whitespace() => continue,
            '(' | '[' | '{' => Token::Open,
            ')' | ']' | '}' => Token::Close,
            ',' => Token::Comma,
            ':' => Token::Colon,
            '-' | '+' => Token::Sign,
            '\'' | '"' => {
                i = string_end(&chars, i - 1)?;
                Token::Value
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric()
                        || chars[i] == '.'
                        || chars[i] == '_'
                        || (matches!(chars[i], '+' | '-') && matches!(chars[i - 1], 'e' | 'E')))
                {
                    i += 1;
                }
                Token::Value
            }
            c if c.is_alphabetic() => {
                let start = i - 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                match word.as_str() {
                    "True" | "False" | "None" => Token::Value,
                    _ => return None,
                }
            }
            _ => return None,
        };
        tokens.push(token);
    }
    Some(tokens)
}

/// The index past the string literal opening at `start` (single or triple
/// quoted), or `None` if it does not close.
fn string_end(chars: &[char], start: usize) -> Option<usize> {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == quote => {
                if !triple {
                    return Some(i + 1);
                }
                if chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                    return Some(i + 3);
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}
