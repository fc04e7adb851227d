import MetCore
import MetEngine

/// `themet completion`: bash's completion of themet's commands and flags, made from the tables
/// `--help` prints, so that it offers every flag there is. `make install` writes it as
/// `share/bash-completion/completions/themet`.
enum CompletionScript {
    static let usage = """
        usage: themet completion

        Prints the bash completion of themet's commands and flags (made from the same tables as
        --help) on standard output: make install writes it as
        share/bash-completion/completions/themet; source it to try it (. <(themet completion)).
        """

    /// The placeholders whose values are paths: completed as file names.
    static let pathPlaceholders: Set<String> = ["FILE", "DIR", "PATH", "PATH|-|off", "URL|DIR"]

    /// The script.
    static var text: String {
        let flags = [ConfigurationFile.flag] + ServerConfiguration.options.map(\.flag) + ["--help", "--version"]
        let paths =
            [ConfigurationFile.flag]
            + ServerConfiguration.options.filter { pathPlaceholders.contains($0.placeholder) }.map(\.flag)
        let valued = ServerConfiguration.options.filter { !pathPlaceholders.contains($0.placeholder) }.map(\.flag)
        return """
            # bash completion for themet \(MetService.version), made by `themet completion` from its flag table
            _themet() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                case $prev in
                    \(paths.joined(separator: "|")))
                        COMPREPLY=($(compgen -f -- "$cur"))
                        return
                        ;;
                    \(valued.joined(separator: "|")))
                        COMPREPLY=()
                        return
                        ;;
                esac
                if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then
                    COMPREPLY=($(compgen -W "\(Commands.all.map(\.name).joined(separator: " "))" -- "$cur"))
                    return
                fi
                COMPREPLY=($(compgen -W "\(flags.joined(separator: " "))" -- "$cur"))
            }
            complete -F _themet themet

            """
    }
}
