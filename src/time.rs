//! Times as text: RFC 3339 written (the audit log's microseconds, Claude Ops' whole seconds) and
//! read (as Claude Ops writes it), without a date library. Pure: the time is passed in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::sanitize::escape;

/// RFC 3339 UTC with microseconds, without a date library.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// RFC 3339 (`2026-03-21T14:00:00Z`, fractions and offsets too), as Claude Ops writes it.
pub fn parse_time(s: &str) -> Result<SystemTime, String> {
    let bad = || format!("{:?} is not an RFC 3339 time (2026-03-21T14:00:00Z)", escape(s));
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let t = &s[r];
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    let (y, mo, d, h, mi, sec) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    let mut nanos: u32 = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        let mut n: u64 = 0;
        for (i, c) in frac.bytes().take(digits).enumerate() {
            if i < 9 {
                n = n * 10 + u64::from(c - b'0');
            }
        }
        for _ in digits..9 {
            n *= 10;
        }
        nanos = u32::try_from(n).map_err(|_| bad())?;
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let oh = num(s.len() - 5..s.len() - 3)?;
            let om = num(s.len() - 2..s.len())?;
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            let o = oh * 3600 + om * 60;
            if rest.starts_with('-') { -o } else { o }
        }
        _ => return Err(bad()),
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mdays = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > mdays[(mo - 1) as usize] || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    // Howard Hinnant's days_from_civil.
    let (yy, mm) = if mo <= 2 { (y - 1, mo + 9) } else { (y, mo - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec.min(59) - offset;
    let secs = u64::try_from(secs).map_err(|_| bad())?;
    Ok(UNIX_EPOCH + Duration::new(secs, nanos))
}

/// `2026-03-21T18:00:00Z`: whole seconds in UTC, the form Claude Ops' hook parses.
pub fn format_time(t: SystemTime) -> String {
    let full = rfc3339(t);
    format!("{}Z", &full[..19.min(full.len())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_micros(1_795_000_000_123_456)),
            "2026-11-18T11:06:40.123456Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000000Z"
        );
    }
}
