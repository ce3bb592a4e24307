//! Reading an upstream Turbulence checkout's oracles (`Source_Code/` of the
//! Turbulence-Benchmark repository), as SOURCE.md describes its layout:
//! `Q<n>/solution.py.template`, `Q<n>/tests.py.template` and
//! `Q<n>/gen_function_params.py` (`input_generator(params, random_seed)`).
//! Placeholders `$0 .. $(k-1)` are the question's parameters; past them come
//! the instance number, the function name, the model and the round (the
//! tests' import line uses them; the judge drops that line).
//!
//! Not for: running them (the sandbox does) or generating parameters.

use std::path::{Path, PathBuf};

use super::Instance;

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("{0}: not a directory (expected the upstream Turbulence checkout's Source_Code/)")]
    NotADirectory(PathBuf),
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An upstream checkout's `Source_Code/` folder.
#[derive(Clone, Debug)]
pub struct Upstream {
    root: PathBuf,
}

/// One instance's oracle files with its placeholders filled.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceFiles {
    pub solution: String,
    pub generator: String,
    /// `None` where the question has no test file.
    pub tests: Option<String>,
}

impl Upstream {
    pub fn open(root: &Path) -> Result<Upstream, UpstreamError> {
        if !root.is_dir() {
            return Err(UpstreamError::NotADirectory(root.to_owned()));
        }
        Ok(Upstream {
            root: root.to_owned(),
        })
    }

    /// The instance's solution, fuzz-input generator and tests.
    pub fn instantiate(&self, instance: &Instance) -> Result<InstanceFiles, UpstreamError> {
        let folder = self.root.join(format!("Q{}", instance.question));
        let values = placeholder_values(instance);
        let solution = fill(&read(&folder.join("solution.py.template"))?, &values);
        let generator = read(&folder.join("gen_function_params.py"))?;
        let tests_path = folder.join("tests.py.template");
        let tests = if tests_path.exists() {
            Some(fill(&read(&tests_path)?, &values))
        } else {
            None
        };
        Ok(InstanceFiles {
            solution,
            generator,
            tests,
        })
    }
}

fn read(path: &Path) -> Result<String, UpstreamError> {
    std::fs::read_to_string(path).map_err(|source| UpstreamError::Read {
        path: path.to_owned(),
        source,
    })
}

/// `$0 ..`: the parameters as the question text shows them, then the
/// instance number, the function name, the model and the round.
fn placeholder_values(instance: &Instance) -> Vec<String> {
    let mut values: Vec<String> = instance.params.iter().map(python_text).collect();
    values.push(instance.instance.to_string());
    values.push(instance.function_name.clone());
    values.push("codecal".into());
    values.push("1".into());
    values
}

/// A parameter as it appears in the templates: strings bare, numbers and
/// lists as Python literals.
fn python_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Bool(true) => "True".into(),
        serde_json::Value::Bool(false) => "False".into(),
        serde_json::Value::Null => "None".into(),
        serde_json::Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(python_literal).collect();
            format!("[{}]", inner.join(", "))
        }
        other => other.to_string(),
    }
}

fn python_literal(value: &serde_json::Value) -> String {
    match value {
        // A JSON string literal is a Python string literal too.
        serde_json::Value::String(_) => value.to_string(),
        other => python_text(other),
    }
}

/// Replaces each `$<n>` that names a value; longer numbers first, so that
/// `$10` is never read as `$1` followed by `0`.
fn fill(template: &str, values: &[String]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        match after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|n| values.get(n))
        {
            Some(value) => {
                out.push_str(value);
                rest = &after[digits..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_whole_numbers_and_leave_others() {
        let values: Vec<String> = (0..12).map(|n| format!("<{n}>")).collect();
        assert_eq!(
            fill("$1 $10 $11x $$ $99 $", &values),
            "<1> <10> <11>x $$ $99 $"
        );
    }

    #[test]
    fn parameters_read_as_the_question_shows_them() {
        let instance = Instance {
            question: 39,
            instance: 7,
            function_name: "f".into(),
            params: vec![3.into(), "descending".into(), serde_json::json!([1, "a"])],
            prompt: String::new(),
        };
        assert_eq!(
            placeholder_values(&instance),
            ["3", "descending", "[1, \"a\"]", "7", "f", "codecal", "1"]
        );
    }
}
