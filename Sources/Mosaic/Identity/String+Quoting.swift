extension StringProtocol {
    /// The text in single quotes for a message, cut to `limit` characters with its full length stated, so that
    /// input of any size gives a message of bounded size: `'com.ghost.weather'`, or `'aaaa…' (1048576 bytes)`.
    package func quotedForMessage(limit: Int = 80) -> String {
        var shown = ""
        var count = 0
        for character in self {
            guard count < limit else { return "'\(shown)…' (\(utf8.count) bytes)" }
            shown.append(character)
            count += 1
        }
        return "'\(shown)'"
    }
}
