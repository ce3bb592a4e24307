//! The config reader's own tests: choices read and refused at parsing.

use super::*;

fn parse_error(text: &str) -> String {
    RunConfig::parse(text, Path::new("run.toml"), Path::new("."))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_wrong_choice_is_refused_at_parsing_naming_the_key_and_the_values() {
    let error = parse_error("name = \"r\"\n\n[calibration]\nmethod = \"plat\"\n");
    assert!(
        error.starts_with("run.toml: line 4: calibration.method: unknown value \"plat\""),
        "{error}"
    );
    assert!(error.contains("platt, platt-ln"), "{error}");
    assert!(error.contains("multicalibration"), "{error}");
    let error = parse_error("name = \"r\"\ntask = \"translation\"\n");
    assert!(error.contains("line 2: task: unknown value"), "{error}");
    assert!(error.contains("cruxeval-output"), "{error}");
    // A missing key names no key of another line.
    let error = parse_error("name = \"r\"\n");
    assert!(error.contains("missing field `backends`"), "{error}");
    assert!(!error.contains("name: missing"), "{error}");
    let error = parse_error("name = \"r\"\n[[backends]]\nkind = \"local\"\nlm_weights = \"q4\"\n");
    assert!(
        error.contains("line 4: backends.lm_weights: unknown value \"q4\""),
        "{error}"
    );
    assert!(error.contains("mixed"), "{error}");
    let error = parse_error("name = \"r\"\n[generation]\nreflective = [\"ask-true\", \"ask\"]\n");
    assert!(
        error.contains("generation.reflective: unknown value \"ask\""),
        "{error}"
    );
}

#[test]
fn choices_read_back_as_the_strings_they_were_written_as() {
    // A run's stage hashes take its config sections as JSON: typed
    // choices must serialise to the names the file gave.
    let text = "name = \"r\"\ntask = \"cruxeval-input\"\n[[backends]]\nkind = \"local\"\nlm_weights = \"mixed\"\n\
                [prompt]\nstyle = \"chat\"\n\
                [calibration]\nmethod = \"platt-ln\"\ncv = \"group\"\n\
                [dataset]\nisolation = \"unshare\"\n";
    let config = RunConfig::parse(text, Path::new("run.toml"), Path::new(".")).unwrap();
    let json = serde_json::to_value(&config).unwrap();
    assert_eq!(json["task"], "cruxeval-input");
    assert_eq!(json["backends"][0]["lm_weights"], "mixed");
    assert_eq!(json["prompt"]["style"], "chat");
    assert_eq!(json["calibration"]["method"], "platt-ln");
    assert_eq!(json["calibration"]["cv"], "group");
    assert_eq!(json["dataset"]["isolation"], "unshare");
    assert_eq!(json["scoring"]["operating_points"][0], "best-f1");
}
