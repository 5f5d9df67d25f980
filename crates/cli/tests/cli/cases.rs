//! Command lines as data: each `tests/cmd/*.toml` case is one run of the
//! tool with its arguments and the exit status, standard output and
//! standard error it must give, byte for byte. A table of refusals reads
//! better as files than as code; `TRYCMD=overwrite cargo test -p
//! partalloc-cli --test cli cases` rewrites the expected outputs after a
//! deliberate change of wording (review the diff).

#[test]
fn command_line_cases() {
    trycmd::TestCases::new()
        .register_bin(
            "partalloc",
            std::path::Path::new(env!("CARGO_BIN_EXE_partalloc")),
        )
        .case("tests/cmd/*.toml");
}
