//! The library's closed choices (a rescaling method, a device, a reflective
//! measure, a dataset) and their one spelling each, shared by config files,
//! the command line, the Python package and the reports. A type lists its
//! values once with [`choices!`]; reading a name refuses an unknown one with
//! the names there are. Not a command-line parser: the CLI adapts these to
//! clap, so the library does not depend on it.

use std::fmt;

/// A closed set of values, each with its name.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// Every value with its name, in the order a user is shown them.
    const NAMES: &'static [(Self, &'static str)];
    /// Other spellings accepted on input, never written.
    const ALIASES: &'static [(Self, &'static str)] = &[];

    /// The value's name.
    fn choice_name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(value, _)| *value == self)
            .map_or("", |(_, name)| name)
    }

    /// The value named `text` (ASCII case ignored), or `None`.
    fn from_name(text: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .chain(Self::ALIASES)
            .find(|(_, name)| name.eq_ignore_ascii_case(text))
            .map(|(value, _)| *value)
    }

    /// The names, in order.
    fn names() -> Vec<&'static str> {
        Self::NAMES.iter().map(|(_, name)| *name).collect()
    }
}

/// A name that is none of a choice's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {given:?} (expected one of: {})", expected.join(", "))]
pub struct UnknownChoice {
    pub given: String,
    pub expected: Vec<&'static str>,
}

/// The value of `T` named `text`, or an error listing `T`'s names.
pub fn parse_choice<T: Choice>(text: &str) -> Result<T, UnknownChoice> {
    T::from_name(text).ok_or_else(|| UnknownChoice {
        given: text.to_owned(),
        expected: T::names(),
    })
}

/// Writes a choice as its name.
pub fn fmt_choice<T: Choice>(value: T, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.write_str(value.choice_name())
}

/// Implements [`Choice`] for an enum from its variants and their names,
/// with optional input aliases, and writes and reads it by name: `Display`,
/// and serde's `Serialize` and `Deserialize` (an unknown name refused with
/// the names there are):
/// `choices!(Device { Auto => "auto", Cpu => "cpu" });`.
#[macro_export]
macro_rules! choices {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? } $(aliases { $($alias_variant:ident => $alias:literal),+ $(,)? })?) => {
        impl $crate::choice::Choice for $ty {
            const NAMES: &'static [(Self, &'static str)] = &[$((Self::$variant, $name)),+];
            $(const ALIASES: &'static [(Self, &'static str)] = &[$((Self::$alias_variant, $alias)),+];)?
        }
        $crate::choice_io!($ty);
    };
}

/// `Display`, `Serialize` and `Deserialize` by name for a type that
/// implements [`Choice`] (what [`choices!`] adds; by hand for a choice
/// whose values carry data).
#[macro_export]
macro_rules! choice_io {
    ($ty:ty) => {
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                $crate::choice::fmt_choice(*self, f)
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::choice::Choice::choice_name(*self))
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                let text =
                    <::std::string::String as ::serde::Deserialize>::deserialize(deserializer)?;
                $crate::choice::parse_choice(&text).map_err(::serde::de::Error::custom)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Isolation {
        Auto,
        Unshare,
    }
    choices!(Isolation { Auto => "auto", Unshare => "unshare" } aliases { Unshare => "netns" });

    #[test]
    fn a_choice_reads_its_names_and_aliases_and_writes_its_name() {
        assert_eq!(parse_choice::<Isolation>("auto"), Ok(Isolation::Auto));
        assert_eq!(parse_choice::<Isolation>("Unshare"), Ok(Isolation::Unshare));
        assert_eq!(parse_choice::<Isolation>("netns"), Ok(Isolation::Unshare));
        assert_eq!(Isolation::Unshare.to_string(), "unshare");
        assert_eq!(Isolation::names(), ["auto", "unshare"]);
    }

    #[test]
    fn a_choice_is_written_and_read_by_its_name() {
        assert_eq!(
            serde_json::to_string(&Isolation::Unshare).unwrap(),
            "\"unshare\""
        );
        let read: Vec<Isolation> = serde_json::from_str(r#"["auto", "netns"]"#).unwrap();
        assert_eq!(read, [Isolation::Auto, Isolation::Unshare]);
        let error = serde_json::from_str::<Isolation>("\"box\"").unwrap_err();
        assert!(
            error.to_string().contains("expected one of: auto, unshare"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_name_lists_the_names_there_are() {
        let error = parse_choice::<Isolation>("bwrap").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown value \"bwrap\" (expected one of: auto, unshare)"
        );
    }
}
