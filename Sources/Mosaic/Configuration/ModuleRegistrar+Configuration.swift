extension ModuleRegistrar {
    /// Declares configuration keys the module reads; boot checks that the host supplies each required one, well
    /// formed, before any module runs.
    public mutating func configuration<each Value: ConfigurationValue>(_ keys: repeat ConfigurationKey<each Value>) {
        for key in repeat each keys { configurationKeys.append(key.erased) }
    }
}
