fn main() {
    std::process::exit(fabcheck::cli::main())
}
