extension Character {
    /// `0`–`9` only (unlike `isNumber`, which accepts every script's digits and fractions).
    package var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
