extension Array where Element == UInt8 {
    /// Appends the decimal digits of `value` without building a String (status lines, lengths,
    /// access lines, synthetic records); a negative value is written as 0.
    public mutating func appendDecimal(_ value: Int) {
        guard value > 0 else {
            append(UInt8(ascii: "0"))
            return
        }
        let start = count
        var rest = value
        while rest > 0 {
            append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        }
        self[start...].reverse()
    }
}
