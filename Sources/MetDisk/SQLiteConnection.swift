import CSQLite

/// A failed SQLite call: its result code and SQLite's message for it.
struct SQLiteError: Error, CustomStringConvertible {
    /// The primary result code (`SQLITE_FULL`, `SQLITE_CORRUPT`, …), extended codes reduced.
    let code: Int32
    let message: String

    var description: String { message }

    /// Whether the file is not a database of ours at all, or is damaged: the cases in which the
    /// file is moved aside and a new one made.
    var meansUnusableFile: Bool { code == SQLITE_NOTADB || code == SQLITE_CORRUPT }
}

/// One SQLite connection (`sqlite3 *`), opened in multi-thread mode: any thread may use it, one at
/// a time, which its owner guarantees (the writer's thread, or a reader taken from the pool).
/// `@unchecked Sendable` because the pointer is not; closed when the last reference goes.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer

    /// Opens `path` for reading and writing, creating it if `create`; or, `readOnly`, for reading
    /// only (the file is never changed through this connection).
    init(path: String, create: Bool, readOnly: Bool = false) throws(SQLiteError) {
        var handle: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        let flags = access | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code & 0xFF, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 0)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs `sql` (one or more statements without results).
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// A prepared statement of `sql`, reusable until this connection closes.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        return SQLiteStatement(statement, connection: self)
    }

    /// The first column of the first row of `sql`, as an integer (for pragmas and counts).
    func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.integer(at: 0)
    }

    /// The first column of the first row of `sql`, as text.
    func text(_ sql: String) throws(SQLiteError) -> String {
        let statement = try prepare(sql)
        guard try statement.step() else { return "" }
        return statement.text(at: 0)
    }

    /// The error of a failed call that returned `code`.
    func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code & 0xFF, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// A prepared statement of one connection; used by that connection's user only. Reset before each
/// use by `bind`, so a statement left mid-way never holds a read transaction open.
final class SQLiteStatement {
    private let handle: OpaquePointer
    /// Kept so the connection outlives its statements.
    private let connection: SQLiteConnection

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters `?1`, `?2`, … in order.
    func bind(_ values: SQLiteValue...) throws(SQLiteError) { try bind(values) }

    /// `bind(_:)` with the values in an array (a statement whose parameters are counted at run time).
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let number):
                code = sqlite3_bind_int64(handle, index, number)
            case .real(let number):
                code = sqlite3_bind_double(handle, index, number)
            case .text(var text):
                // Its own bytes with their length (`utf8CString` made a NUL-terminated copy first,
                // on every read of the disk tier). An empty text still needs an address: a null
                // one would bind SQL NULL.
                code = text.withUTF8 { bytes in
                    guard let address = bytes.baseAddress else {
                        return csqlite_bind_text_copy(handle, index, "", 0)
                    }
                    return address.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        csqlite_bind_text_copy(handle, index, $0, Int32(bytes.count))
                    }
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { csqlite_bind_blob_copy(handle, index, $0.baseAddress, Int32($0.count)) }
            case .null:
                code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw connection.error(code) }
        }
    }

    /// Steps once: true when a row is ready to read, false when the statement is done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        case let code:
            let error = connection.error(code)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Ends the statement's use (after reading its rows), releasing what it holds.
    func reset() { sqlite3_reset(handle) }

    func integer(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func real(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(at column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: text)
    }

    /// Whether the column's value is NULL.
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// A TEXT column's value, or nil for NULL.
    func optionalText(at column: Int32) -> String? {
        isNull(at: column) ? nil : text(at: column)
    }

    /// The bytes of a BLOB column (empty for NULL or an empty blob).
    func blob(at column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// `body` given a BLOB column's bytes where SQLite holds them (empty for NULL or an empty
    /// blob): valid only until `body` returns, and until the statement steps or resets.
    func withBlob<Result>(at column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

/// A value bound to a statement's parameter.
enum SQLiteValue {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null
}
