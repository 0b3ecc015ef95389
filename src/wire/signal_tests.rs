use super::*;

#[test]
fn signal_numbers_are_the_platforms_and_names_parse_in_every_usual_form() {
    use nix::sys::signal::Signal as Libc;
    for s in Signal::ALL {
        let libc = Libc::try_from(s.number()).unwrap();
        assert_eq!(libc.as_str(), format!("SIG{}", s.name()));
    }
    for form in ["TERM", "SIGTERM", "term", "sigterm", "15"] {
        assert_eq!(Signal::parse(form), Some(Signal::Term), "{form}");
    }
    for bad in ["", "SIG", "TERMINATE", "SEGV", "99", "-9"] {
        assert_eq!(Signal::parse(bad), None, "{bad}");
    }
}
