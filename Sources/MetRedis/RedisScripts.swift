/// The Lua scripts the shared tier runs in Redis: each is one round trip and atomic, so that no
/// two instances see a half-done step. Sent with `EVAL` (Redis keeps the compiled script by its
/// hash after the first call).
enum RedisScripts {
    /// GCRA over the group's budget, on Redis's clock (`TIME`), so that the instances' clocks do
    /// not matter. KEYS[1] the budget key; ARGV[1] microseconds per token; ARGV[2] the burst.
    /// Returns 0 when a token was taken, else the microseconds until one is due. The key holds the
    /// theoretical arrival time and expires once the bucket would be full again.
    static let takeToken = """
        local interval = tonumber(ARGV[1])
        local burst = tonumber(ARGV[2])
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
        local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
        local allowed = tat - (burst - 1) * interval
        if now < allowed then return math.ceil(allowed - now) end
        local next = math.max(tat, now) + interval
        redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - now) / 1000) + 1)
        return 0
        """

    /// Gives a fill lock back only if it is still this holder's (a lock that expired may be
    /// someone else's now), and announces how the fill ended. KEYS[1] the lock; ARGV[1] the token;
    /// ARGV[2] the channel; ARGV[3] the notice.
    static let release = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
        redis.call('PUBLISH', ARGV[2], ARGV[3])
        return 1
        """

    /// Gives a fill lock back only if it is still this holder's, without a notice: for a lock whose
    /// `SET` got no answer in time (it may have been set after all, with no holder to release it).
    /// KEYS[1] the lock; ARGV[1] the token. Returns 1 when it was removed.
    static let releaseQuietly = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    /// Extends the fill locks this instance holds by another lease: each only if it is still this
    /// holder's. KEYS the locks; ARGV[1] the lease in milliseconds; ARGV[i + 1] the token of
    /// KEYS[i]. Returns how many were extended.
    static let renew = """
        local renewed = 0
        for index, key in ipairs(KEYS) do
            if redis.call('GET', key) == ARGV[index + 1] then
                redis.call('PEXPIRE', key, ARGV[1])
                renewed = renewed + 1
            end
        end
        return renewed
        """

    /// Removes an entry and tells every instance to drop its copies. KEYS[1] the entry; ARGV[1]
    /// the channel; ARGV[2] the notice. Returns the number of keys removed (0 or 1).
    static let purge = """
        local removed = redis.call('DEL', KEYS[1])
        redis.call('PUBLISH', ARGV[1], ARGV[2])
        return removed
        """

    /// Opens the group's breaker: the key lives as long as the block lasts, on Redis's clock (a
    /// longer block already stored is kept; an instance connecting later reads what is left with
    /// `PTTL`), and every instance is told. KEYS[1] the breaker; ARGV[1] milliseconds it lasts;
    /// ARGV[2] the channel; ARGV[3] the notice.
    static let block = """
        if tonumber(ARGV[1]) > redis.call('PTTL', KEYS[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
        redis.call('PUBLISH', ARGV[2], ARGV[3])
        return 1
        """
}
