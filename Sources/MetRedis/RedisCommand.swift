import CHiredis

/// Commands as hiredis's async API takes them. Redis thread only.
enum RedisCommand {
    /// `redisAsyncCommandArgv` over Swift byte arrays, which hiredis copies before returning.
    static func send(
        _ context: UnsafeMutablePointer<redisAsyncContext>, _ arguments: [[UInt8]],
        callback: (
            @convention(c) (
                UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
            ) -> Void
        )?,
        privdata: UnsafeMutableRawPointer?
    ) -> Bool {
        // A closure, not `\.count`: a key path is applied through the runtime on every element.
        var lengths = arguments.map { $0.count }
        var joined: [UInt8] = []
        joined.reserveCapacity(lengths.reduce(1, +))
        for argument in arguments { joined += argument }
        joined.append(0)
        return joined.withUnsafeBufferPointer { buffer in
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(lengths.count)
            var offset = 0
            for length in lengths {
                pointers.append(UnsafeRawPointer(buffer.baseAddress! + offset).assumingMemoryBound(to: CChar.self))
                offset += length
            }
            return redisAsyncCommandArgv(context, callback, privdata, Int32(arguments.count), &pointers, &lengths)
                == REDIS_OK
        }
    }
}
