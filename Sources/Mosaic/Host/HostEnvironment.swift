/// What the host application offers modules: its version, the platform it runs on, and its features.
public struct HostEnvironment: Sendable, Hashable {
    /// The host application's version.
    public var version: SemanticVersion
    /// The platform the host runs on.
    public var platform: Platform
    /// The platform's version.
    public var platformVersion: SemanticVersion
    /// Features the host offers, such as `location`.
    public var features: Set<String>
    /// The link schemes the host answers to, lowercased, such as `ghost`: the only ones its kernel accepts unless
    /// `KernelOptions.deeplinkRules` says otherwise.
    public var schemes: Set<String>
    /// The scheme of the links modules build (``ActivationContext/url(for:)``): the first scheme given, lowercased;
    /// `app` when the host names none.
    public var linkScheme: String

    /// Describes a host; the platform defaults to the one this code runs on. Modules build their links with the
    /// first of `schemes`.
    public init(
        version: SemanticVersion,
        platform: Platform = .current,
        platformVersion: SemanticVersion = "0.0.0",
        features: Set<String> = [],
        schemes: [String] = []
    ) {
        self.version = version
        self.platform = platform
        self.platformVersion = platformVersion
        self.features = features
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.linkScheme = schemes.first?.lowercased() ?? "app"
    }
}
