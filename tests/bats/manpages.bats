#!/usr/bin/env bats
# The man pages (docs/man/) keep up with the programs: every option a program's --help lists
# appears in its man page, and every page is installed.

bats_require_minimum_version 1.5.0
load helpers

# The options a help text names: words starting with one or two dashes and a letter, taken
# where an option can start (line start, space, comma, '[', '|' or '{').
help_options() {
    grep -oE '(^|[ ,[|{])--?[a-zA-Z][a-zA-Z0-9_:-]*' | sed -E 's/^[ ,[|{]//' | sort -u
}

# The man page as plain text: troff's \- is a dash, font switches go.
man_text() {
    sed -E 's/\\-/-/g; s/\\f[BIRP]//g; s/\\\(en/-/g' "$1"
}

# check_options PAGE HELP-COMMAND...: every option of the help text is in PAGE.
check_options() {
    local page="$TMPI_SRC/docs/man/$1" help opt missing=""
    shift
    help=$("$@" 2>&1) || { echo "$* failed: $help" >&2; return 1; }
    local opts
    opts=$(help_options <<<"$help")
    [ -n "$opts" ] || { echo "no options found in the help of $*" >&2; return 1; }
    local text
    text=$(man_text "$page")
    while read -r opt; do
        grep -qF -- "$opt" <<<"$text" || missing="$missing $opt"
    done <<<"$opts"
    if [ -n "$missing" ]; then
        echo "options in '$*' that ${page##*/} does not mention:$missing" >&2
        return 1
    fi
}

@test "man pages: tmpi-launch(1) has every option of tmpi-launch --help" {
    check_options tmpi-launch.1 "$TMPI_BUILD/launcher/tmpi-launch" --help
}

@test "man pages: tmpictl(1) has every option of tmpictl --help and tmpictl tree --help" {
    check_options tmpictl.1 "$TMPI_BUILD/launcher/tmpictl" --help
    check_options tmpictl.1 "$TMPI_BUILD/launcher/tmpictl" tree --help
}

@test "man pages: tmpid(8) has every option of tmpid --help" {
    check_options tmpid.8 "$TMPI_BUILD/agent/tmpid" --help
}

@test "man pages: tmpicc(1) has every option of tmpicc --help and tmpicxx --help" {
    check_options tmpicc.1 "$TMPI_BUILD/launcher/tmpicc" --help
    check_options tmpicc.1 "$TMPI_BUILD/launcher/tmpicxx" --help
}

@test "man pages: the check sees a missing option" {
    # guards the check itself: an option the page lacks must be reported
    run check_options tmpid.8 printf 'usage: tmpid [--no-such-option-anywhere]\n'
    expect_status 1
    [[ "$output" == *"--no-such-option-anywhere"* ]] || { echo "got: $output" >&2; return 1; }
}

@test "man pages: every page in docs/man is installed" {
    local f
    for f in "$TMPI_SRC"/docs/man/*.[0-9]; do
        grep -qF "'man/${f##*/}'" "$TMPI_SRC/docs/meson.build" ||
            { echo "${f##*/} is not in docs/meson.build's install_man" >&2; return 1; }
    done
}
