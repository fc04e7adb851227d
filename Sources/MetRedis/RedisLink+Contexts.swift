import CHiredis
import MetEngine

/// Making the link's two hiredis contexts: connected (or connecting) to the endpoint, attached to
/// the link's loop with the reply bound, and reporting a failed connect or a lost connection back
/// to the link. The Redis thread only, like the rest of the link.
extension RedisLink {
    /// A new context for `endpoint`, attached to the loop; nil (and the link lost) when hiredis
    /// cannot even start connecting.
    func context(for endpoint: RedisAddress.Endpoint) -> UnsafeMutablePointer<redisAsyncContext>? {
        let context: UnsafeMutablePointer<redisAsyncContext>?
        switch endpoint {
        case .tcp(let host, let port): context = redisAsyncConnect(host, Int32(port))
        case .unix(let path): context = redisAsyncConnectUnix(path)
        }
        guard let context, context.pointee.err == 0 else {
            var reason = "out of memory"
            if let context {
                if let text = context.pointee.errstr { reason = String(cString: text) }
                redisAsyncFree(context)
            }
            lose("cannot connect (\(reason))")
            return nil
        }
        context.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        guard chiredis_attach(context, loop.base, settings.replyLimit) == REDIS_OK else {
            redisAsyncFree(context)
            lose("cannot attach to the loop")
            return nil
        }
        redisAsyncSetConnectCallback(context) { context, status in
            guard status != REDIS_OK, let context, let data = context.pointee.data else { return }
            // hiredis frees a context whose connect failed once this returns.
            let reason = context.pointee.errstr.map { String(cString: $0) } ?? "connect failed"
            RedisLink.link(data).forget(UnsafeMutablePointer(mutating: context), reason: "cannot connect (\(reason))")
        }
        redisAsyncSetDisconnectCallback(context) { context, status in
            guard let context, let data = context.pointee.data else { return }
            // A connection dropped for a reply over the bound is freed with its error set, and
            // hiredis then says REDIS_OK: the error is what it was.
            let failed = status != REDIS_OK || context.pointee.err != 0
            let link = RedisLink.link(data)
            var reason = failed ? context.pointee.errstr.map { String(cString: $0) } ?? "?" : "disconnected"
            // The reader's word for a reply object it could not make, which the bound's charge refuses.
            if context.pointee.err == REDIS_ERR_OOM {
                reason = "a reply larger than \(link.settings.replyLimit) bytes, or out of memory"
            }
            link.forget(UnsafeMutablePointer(mutating: context), reason: "connection lost (\(reason))")
        }
        return context
    }
}
