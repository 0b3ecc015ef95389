//! `hivectl man --out DIR`: hivectl.1 and one page per subcommand, from the
//! clap definition (so they cannot drift from the flags), with the sections
//! clap_mangen does not write: ENVIRONMENT, FILES, EXIT STATUS, SEE ALSO.
//! The daemon's page, `hive-c0re.8`, is `systemd/hive-c0re.8` in the source
//! tree (tested against the daemon's `--help`).

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use super::args::Cli;
use super::exit;

/// The extra sections of hivectl.1, in roff.
const MAIN_SECTIONS: &str = r#".SH ENVIRONMENT
.TP
\fBHIVE_SOCKET\fR
The path of hive\-c0re's admin socket, as \fB\-\-socket\fR.
.TP
\fBNO_COLOR\fR
When set and not empty, states are not coloured (they are only coloured on a terminal).
.TP
\fBHIVECTL_TIMEOUT_MS\fR
The budget of one call in milliseconds (default 5000).
.TP
\fBCOMPLETE\fR
Set by the completion scripts of \fBhivectl completions\fR to ask for candidates.
.SH FILES
.TP
\fI/run/hyperhive/host.sock\fR
hive\-c0re's admin socket (mode 0660, group \fBhive\-admin\fR), owned by \fBhive\-c0re.socket\fR.
.TP
\fI/etc/hive\-c0re/config.json\fR
The daemon's configuration.
"#;

/// The last section of hivectl.1.
const SEE_ALSO: &str = r#".SH "SEE ALSO"
\fBhive\-c0re\fR(8), \fBsystemctl\fR(1), \fBmachinectl\fR(1), \fBjournalctl\fR(1)
"#;

/// EXIT STATUS in roff, from the one table of statuses
/// ([`exit::MEANINGS`]).
pub fn exit_status_section() -> String {
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (status, words) in exit::MEANINGS {
        let words = words.replace('-', "\\-");
        roff.push_str(&format!(".TP\n\\fB{status}\\fR\n{words}.\n"));
    }
    roff
}

/// Write the pages into `dir`; returns the exit status.
pub fn write(dir: &Path, err: &mut dyn Write) -> u8 {
    match write_pages(dir) {
        Ok(()) => exit::OK,
        Err(e) => {
            let _ = writeln!(
                err,
                "hivectl: cannot write manual pages to {}: {e}",
                dir.display()
            );
            exit::REFUSED
        }
    }
}

fn write_pages(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone());
        let mut text = Vec::new();
        page.render(&mut text)?;
        text.extend_from_slice(b".SH \"SEE ALSO\"\n\\fBhivectl\\fR(1), \\fBhive\\-c0re\\fR(8)\n");
        std::fs::write(dir.join(page.get_filename()), text)?;
    }
    let page = clap_mangen::Man::new(cmd);
    let mut text = Vec::new();
    page.render(&mut text)?;
    text.extend_from_slice(MAIN_SECTIONS.as_bytes());
    text.extend_from_slice(exit_status_section().as_bytes());
    text.extend_from_slice(SEE_ALSO.as_bytes());
    std::fs::write(dir.join(page.get_filename()), text)
}
