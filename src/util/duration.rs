//! Durations: the one parser of what people write (`500ms`, `30s`, `5m`, a bare number of
//! seconds) and the one short form messages show.

use std::time::Duration;

/// The longest duration fabcheck accepts (timeouts, waits): 30 days. Longer values are
/// mistakes (`1e300`, `18446744073709551615`), and would overflow deadlines.
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Parse a human duration (`500ms`, `30s`, `5m`; a bare number is seconds), at most
/// [`MAX_DURATION`].
pub(crate) fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let t = s.trim();
    let too_long = || DurationError::TooLong(s.to_string());
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_nan() || secs < 0.0 {
            return Err(DurationError::NotADuration(s.to_string()));
        }
        // Compared as f64 before converting: Duration::from_secs_f64 panics past u64 seconds.
        if secs > MAX_DURATION.as_secs_f64() {
            return Err(too_long());
        }
        return Ok(Duration::from_secs_f64(secs));
    }
    let d =
        humantime::parse_duration(t).map_err(|e| DurationError::Unreadable(s.to_string(), e))?;
    if d > MAX_DURATION {
        return Err(too_long());
    }
    Ok(d)
}

/// What is wrong with a duration someone wrote (the text as written).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DurationError {
    #[error("`{0}` is not a duration like 500ms, 30s or 5m")]
    NotADuration(String),
    #[error("`{0}` is not a duration like 500ms, 30s or 5m ({1})")]
    Unreadable(String, humantime::DurationError),
    #[error("`{0}` is longer than {max}, the longest duration fabcheck accepts", max = humantime::format_duration(MAX_DURATION))]
    TooLong(String),
}

/// An optional duration option (`timeout: 30`, `timeout: "90s"`), for
/// `#[serde(deserialize_with = "…")]`: whole seconds, or a human duration string.
pub(crate) fn optional<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Written {
        Whole(i64),
        Number(f64),
        Text(String),
    }
    let text = match <Option<Written> as serde::Deserialize>::deserialize(d)? {
        None => return Ok(None),
        Some(Written::Whole(i)) if i < 0 => {
            return Err(serde::de::Error::custom(format!("{i} is negative")))
        }
        Some(Written::Whole(i)) => i.to_string(),
        Some(Written::Number(f)) => f.to_string(),
        Some(Written::Text(t)) => t,
    };
    parse_duration(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// Human form of a duration for messages.
pub(crate) fn human(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
